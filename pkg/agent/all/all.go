// Package all links in every agent's home. Import it for its side effect
// (the homes register themselves with pkg/session):
//
//	import _ "github.com/sessctl/sessctl/pkg/agent/all"
package all

import (
	_ "github.com/sessctl/sessctl/pkg/agent/claude"
	_ "github.com/sessctl/sessctl/pkg/agent/clawdcode"
	_ "github.com/sessctl/sessctl/pkg/agent/codex"
	_ "github.com/sessctl/sessctl/pkg/agent/kimi"
	_ "github.com/sessctl/sessctl/pkg/agent/kimicode"
)
