package diff

import _ "github.com/sessctl/sessctl/pkg/agent/all" // the agents' homes decode the test files
