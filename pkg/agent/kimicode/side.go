package kimicode

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// SideFileOf implements cleanup.SideFiles: the store that holds a session
// (<store>/sessions/wd_…/session_<uuid>/agents/main/wire.jsonl) keeps
// session_index.jsonl, one line per session.
func (Home) SideFileOf(_, main string, _, exists func(string) bool) string {
	store := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(main))))))
	if exists(filepath.Join(store, "session_index.jsonl")) {
		return store
	}
	return ""
}

// SideRefs implements cleanup.SideFiles: the index lines of the sessions.
// sessctl leaves them: with a session's directory removed and its index
// line left, Kimi Code 2.1.0's `kimi session list` (in the session's work
// directory) no longer lists it, and `kimi -r <id>` says `Session "<id>"
// not found.` — as for any unknown id.
func (Home) SideRefs(store string, ids []string) ([]session.SideRef, []string) {
	index := filepath.Join(store, "session_index.jsonl")
	counts := map[string]int{}
	if f, err := jsonl.Open(index); err == nil {
		jsonl.Scan(bufio.NewReader(f), func(l *jsonl.Line) error {
			for _, id := range ids {
				if bytes.Contains(l.Raw, []byte(`"`+id+`"`)) {
					counts[id]++
				}
			}
			return nil
		})
		f.Close()
	}
	var refs []session.SideRef
	for _, id := range ids {
		if n := counts[id]; n > 0 {
			refs = append(refs, session.SideRef{Path: index, SessionID: id,
				What: fmt.Sprintf("%d index line(s) for the session; Kimi Code skips entries whose directory is gone, sessctl leaves them", n)})
		}
	}
	return refs, nil
}

// LineStyle implements redact.Styler: Kimi Code (Node) writes every wire
// line with JSON.stringify, compact with raw UTF-8, so a changed line is
// written compactly and what did not change in it is copied as it was.
func (Home) LineStyle(*ojson.Value) ojson.Style { return ojson.Compact }
