package cleanup

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// SideRef is a reference to a planned session from a file outside it.
type SideRef struct {
	Agent     session.Agent `json:"agent"`
	Path      string        `json:"path"`
	SessionID string        `json:"session_id"`
	// What says what refers to the session, in words.
	What string `json:"what"`
	// Action is "clear" (Apply updates the side file: Kimi's
	// last_session_id) or "report" (sessctl leaves it; it goes stale).
	Action string `json:"action"`
	// Status is planned, then done, stale (left as it is), unchanged (its
	// session was not removed) or failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Side reference actions and statuses.
const (
	ActionClear  = "clear"
	ActionReport = "report"
	SideDone     = "done"
	SideStale    = "stale"
	// SideUnchanged: the session was not removed after all.
	SideUnchanged = "unchanged"
)

// findSideRefs looks for references to the planned sessions: Kimi's
// kimi.json last_session_id, Codex's session_index.jsonl and SQLite state.
func (p *Plan) findSideRefs() {
	kimi := map[string][]*Item{}  // kimi.json path -> sessions
	codex := map[string][]*Item{} // codex home -> sessions
	homes := map[string]string{}  // rollout dir -> codex home
	files := map[string]bool{}    // kimi.json candidates seen
	isFile := func(p string) bool {
		ok, seen := files[p]
		if !seen {
			fi, err := os.Lstat(p)
			ok = err == nil && fi.Mode().IsRegular()
			files[p] = ok
		}
		return ok
	}
	for _, it := range p.Sessions {
		switch it.Agent {
		case session.Kimi:
			if f := kimiJSONFor(it, isFile); f != "" {
				kimi[f] = append(kimi[f], it)
			}
		case session.Codex:
			d := filepath.Dir(it.Main)
			h, ok := homes[d]
			if !ok {
				h = codexHomeFor(it.Main)
				homes[d] = h
			}
			if h != "" {
				codex[h] = append(codex[h], it)
			}
		}
	}
	for _, path := range sortedKeys(kimi) {
		p.kimiRefs(path, kimi[path])
	}
	for _, home := range sortedKeys(codex) {
		p.codexRefs(home, codex[home])
	}
}

// kimiJSONFor finds the kimi.json of the share dir holding a Kimi session
// (<share>/sessions/<hash>/<id>/).
func kimiJSONFor(it *Item, isFile func(string) bool) string {
	for _, dir := range []string{it.Root, filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(it.Main))))} {
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

func (p *Plan) kimiRefs(path string, items []*Item) {
	b, err := os.ReadFile(path)
	if err != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v (last_session_id not checked)", path, err))
		return
	}
	var v kimiJSON
	if err := json.Unmarshal(b, &v); err != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v (last_session_id not checked)", path, err))
		return
	}
	action := ActionClear
	if _, ok := p.rootOf(path); !ok {
		action = ActionReport // outside the roots: never changed
	}
	for _, it := range items {
		for _, wd := range v.WorkDirs {
			if wd.LastSessionID != nil && *wd.LastSessionID == it.ID {
				p.Side = append(p.Side, &SideRef{Agent: session.Kimi, Path: path, SessionID: it.ID, Action: action, Status: StatusPlanned,
					What: fmt.Sprintf("last_session_id of work dir %s (kimi --continue would resume it)", wd.Path)})
			}
		}
	}
}

// codexHomeFor finds the Codex home of a rollout in
// <home>/sessions/YYYY/MM/DD/ or <home>/archived_sessions/.
func codexHomeFor(main string) string {
	dir := filepath.Dir(main)
	for i := 0; i < 5; i++ {
		for _, name := range []string{"session_index.jsonl", "state_5.sqlite", "sessions"} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil && (name != "sessions" || filepath.Dir(main) != dir) {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

func (p *Plan) codexRefs(home string, items []*Item) {
	index := filepath.Join(home, "session_index.jsonl")
	counts := map[string]int{}
	if f, err := jsonl.Open(index); err == nil {
		jsonl.Scan(bufio.NewReader(f), func(l *jsonl.Line) error {
			for _, it := range items {
				if bytes.Contains(l.Raw, []byte(it.ID)) {
					counts[it.ID]++
				}
			}
			return nil
		})
		f.Close()
	}
	dbs := []string{}
	for _, name := range []string{"state_5.sqlite", "thread_history_1.sqlite"} {
		if _, err := os.Lstat(filepath.Join(home, name)); err == nil {
			dbs = append(dbs, name)
		}
	}
	for _, it := range items {
		if n := counts[it.ID]; n > 0 {
			p.Side = append(p.Side, &SideRef{Agent: session.Codex, Path: index, SessionID: it.ID, Action: ActionReport, Status: StatusPlanned,
				What: fmt.Sprintf("%d thread-name line(s) for the thread; Codex ignores names of missing threads, sessctl leaves them", n)})
		}
		for _, db := range dbs {
			what := "a threads row (rollout_path, title, tokens_used) for the thread; Codex 0.169 keeps listing a deleted rollout's row: run `codex` to read-repair or delete the row with sqlite3"
			if db == "thread_history_1.sqlite" {
				what = "the thread's projected items and turns; harmless once the thread row is gone, sessctl does not edit SQLite"
			}
			p.Side = append(p.Side, &SideRef{Agent: session.Codex, Path: filepath.Join(home, db), SessionID: it.ID, Action: ActionReport, Status: StatusPlanned, What: what})
		}
	}
}

// applySide updates the side files whose sessions were removed: Kimi's
// last_session_id is set to null, as Kimi does for an empty session.
// References to sessions that were not removed are left alone.
func (p *Plan) applySide() {
	removed := map[string]bool{}
	for _, it := range p.Sessions {
		if it.Status == StatusRemoved {
			removed[it.ID] = true
		}
	}
	clear := map[string][]*SideRef{}
	for _, ref := range p.Side {
		switch {
		case !removed[ref.SessionID]:
			ref.Status = SideUnchanged // the session stays, so the reference is still right
		case ref.Action == ActionClear:
			clear[ref.Path] = append(clear[ref.Path], ref)
		default:
			ref.Status = SideStale
		}
	}
	for _, path := range sortedKeys(clear) {
		refs := clear[path]
		err := clearKimiLast(path, refs)
		for _, ref := range refs {
			if err != nil {
				ref.Status = StatusFailed
				ref.Error = err.Error()
			} else {
				ref.Status = SideDone
			}
		}
	}
}

// clearKimiLast rewrites kimi.json with "last_session_id": null for each
// ref's session, changing nothing else byte for byte, atomically, and only
// if the file did not change meanwhile.
func clearKimiLast(path string, refs []*SideRef) error {
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
	for _, ref := range refs {
		var q bytes.Buffer
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false)
		enc.Encode(ref.SessionID)
		re := regexp.MustCompile(`("last_session_id"\s*:\s*)` + regexp.QuoteMeta(strings.TrimSpace(q.String())))
		if !re.Match(out) {
			return fmt.Errorf("%s: no last_session_id %q found to clear", path, ref.SessionID)
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
