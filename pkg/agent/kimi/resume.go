package kimi

import "github.com/sessctl/sessctl/pkg/session"

// ResumeCommand implements search.Resumer: `kimi --session <id>` (kimi-cli's
// --session/--resume option), run in the session's work directory: kimi-cli
// keeps sessions per work directory and looks in the current one's.
func (Home) ResumeCommand(s *session.Session) ([]string, bool) {
	return []string{"kimi", "--session", s.ID}, true
}
