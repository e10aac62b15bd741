package claude

import "github.com/sessctl/sessctl/pkg/session"

// ResumeCommand implements search.Resumer: `claude --resume <id>`, run in
// the session's working directory (Claude Code looks for the session in
// the project folder of the current directory).
func (Home) ResumeCommand(s *session.Session) ([]string, bool) {
	return []string{"claude", "--resume", s.ID}, true
}
