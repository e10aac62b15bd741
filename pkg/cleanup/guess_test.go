package cleanup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestGuessAgent: each home recognises its store by its layout, or by its
// name when the layout says nothing; a layout beats a name.
func TestGuessAgent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
		want    session.Agent
	}{
		{".claude", []string{"projects/"}, session.Claude},
		{"store", []string{"projects/", "file-history/"}, session.Claude},
		{"store", []string{"projects/", "settings.json"}, session.Claude},
		{"store", []string{"projects/"}, ""},
		{".kimi", nil, session.Kimi},
		{"share", []string{"kimi.json", "sessions/"}, session.Kimi},
		{".codex", nil, session.Codex},
		{"home", []string{"session_index.jsonl"}, session.Codex},
		{"home", []string{"state_5.sqlite"}, session.Codex},
		{"kimi", []string{"session_index.jsonl"}, session.Codex},
		{".clawdcode", nil, session.Clawdcode},
		{"elsewhere", []string{"notes.txt"}, ""},
	} {
		dir := filepath.Join(t.TempDir(), tc.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range tc.entries {
			p := filepath.Join(dir, e)
			var err error
			if e[len(e)-1] == '/' {
				err = os.Mkdir(p, 0o755)
			} else {
				err = os.WriteFile(p, nil, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := GuessAgent(dir); got != tc.want {
			t.Errorf("%s with %v: GuessAgent = %q, want %q", tc.name, tc.entries, got, tc.want)
		}
	}
}
