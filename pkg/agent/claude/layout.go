package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// RetentionDays implements cleanup.Retention: Claude Code removes sessions
// older than cleanupPeriodDays of <store>/settings.json.
func (Home) RetentionDays(root string) (int, string, string) {
	path := filepath.Join(root, "settings.json")
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, "", ""
		}
		return 0, "", fmt.Sprintf("%s: %v (cleanupPeriodDays ignored)", path, err)
	}
	var v struct {
		Days *json.Number `json:"cleanupPeriodDays"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return 0, "", fmt.Sprintf("%s: %v (cleanupPeriodDays ignored)", path, err)
	}
	if v.Days == nil {
		return 0, "", ""
	}
	n, err := v.Days.Int64()
	if err != nil || n < 1 || n > 1e6 {
		return 0, "", fmt.Sprintf("%s: cleanupPeriodDays %s is not a positive number of days (ignored; the default applies)", path, v.Days)
	}
	return int(n), "cleanupPeriodDays in " + path, ""
}

// StoreVote implements cleanup.StoreRecognizer: ~/.claude, or any directory
// with projects/ and one of Claude Code's other store entries.
func (Home) StoreVote(dir string) session.Vote {
	has := func(name string) bool { return lexists(filepath.Join(dir, name)) }
	base := strings.TrimPrefix(filepath.Base(dir), ".")
	if has("projects") && (base == "claude" || has("file-history") || has("session-env") || has("settings.json")) {
		return session.Sure
	}
	return session.NoVote
}

func lexists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// SessionID implements session.Layout: <uuid>.jsonl.
func (Home) SessionID(name string) string { return strings.TrimSuffix(name, ".jsonl") }

// ProjectFromPath implements session.Layout: projects/<escaped cwd>/.
func (Home) ProjectFromPath(main string) string { return filepath.Base(filepath.Dir(main)) }

// HasSidecar implements session.Layout: <id>/ beside <id>.jsonl holds the
// session's subagents/ and tool-results/.
func (Home) HasSidecar() bool { return true }

// StoreSideDirs implements session.Layout: Claude Code keeps file-history/<id>
// (file checkpoints) and session-env/<id> per session in its store.
func (Home) StoreSideDirs() []string { return []string{"file-history", "session-env"} }

// MayHoldTitle implements session.TitleRecords: custom-title, ai-title and
// summary records can come anywhere in the file.
func (Home) MayHoldTitle(raw []byte) bool {
	return bytes.Contains(raw, []byte("-title")) || bytes.Contains(raw, []byte(`"summary"`))
}
