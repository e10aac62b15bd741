package claude

import (
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
