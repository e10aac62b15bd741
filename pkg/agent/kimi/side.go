package kimi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// SideFileOf implements cleanup.SideFiles: the kimi.json of the share dir
// holding the session (<share>/sessions/<hash>/<id>/context.jsonl), which
// names each work dir's last_session_id.
func (Home) SideFileOf(root, main string, isFile, _ func(string) bool) string {
	for _, dir := range []string{root, filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(main))))} {
		if p := filepath.Join(dir, "kimi.json"); isFile(p) {
			return p
		}
	}
	return ""
}

type kimiJSON struct {
	WorkDirs []struct {
		Path          string  `json:"path"`
		LastSessionID *string `json:"last_session_id"`
	} `json:"work_dirs"`
}

// SideRefs implements cleanup.SideFiles: the work dirs whose
// last_session_id is one of ids (kimi --continue would resume it).
func (Home) SideRefs(path string, ids []string) ([]session.SideRef, []string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v (last_session_id not checked)", path, err)}
	}
	var v kimiJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v (last_session_id not checked)", path, err)}
	}
	var refs []session.SideRef
	for _, id := range ids {
		for _, wd := range v.WorkDirs {
			if wd.LastSessionID != nil && *wd.LastSessionID == id {
				refs = append(refs, session.SideRef{Path: path, SessionID: id, Clearable: true,
					What: fmt.Sprintf("last_session_id of work dir %s (kimi --continue would resume it)", wd.Path)})
			}
		}
	}
	return refs, nil
}

// ClearSideRefs implements cleanup.SideClearer: kimi.json is rewritten with
// "last_session_id": null for each id, as Kimi does for an empty session,
// changing nothing else byte for byte, atomically, and only if the file did
// not change meanwhile.
func (Home) ClearSideRefs(path string, ids []string) error {
	before, err := safety.Stat(path)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out := b
	for _, id := range ids {
		var q bytes.Buffer
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false)
		enc.Encode(id)
		re := regexp.MustCompile(`("last_session_id"\s*:\s*)` + regexp.QuoteMeta(strings.TrimSpace(q.String())))
		if !re.Match(out) {
			return fmt.Errorf("%s: no last_session_id %q found to clear", path, id)
		}
		out = re.ReplaceAll(out, []byte("${1}null"))
	}
	if !json.Valid(out) {
		return fmt.Errorf("%s: would not be valid JSON after the edit; left unchanged", path)
	}
	a, err := jsonl.CreateAtomic(path, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := a.Write(out); err != nil {
		a.Abort()
		return err
	}
	return a.Commit(func() error { return safety.CheckUnchanged(path, before) })
}
