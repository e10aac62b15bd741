package codex

import "github.com/sessctl/sessctl/pkg/session"

// ResumeCommand implements search.Resumer: `codex resume <id>`, run in the
// session's working directory (the thread keeps its own, but the sandbox
// and the project's AGENTS.md come from where Codex runs).
func (Home) ResumeCommand(s *session.Session) ([]string, bool) {
	return []string{"codex", "resume", s.ID}, true
}
