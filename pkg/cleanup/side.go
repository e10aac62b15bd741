package cleanup

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

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

// SideFiles is implemented by the homes of agents whose client keeps
// references to its sessions in files outside them (kimi-cli's kimi.json,
// Codex's session_index.jsonl and SQLite state).
type SideFiles interface {
	// SideFileOf names the file or directory outside the session with main
	// file main (found under root) that refers to it, or "". Sessions with
	// the same answer are looked up together. isFile and exists are Lstat
	// checks that cleanup caches across sessions.
	SideFileOf(root, main string, isFile, exists func(path string) bool) string
	// SideRefs reads the references that side holds to the sessions with
	// the given ids, with a warning for each reference that could not be
	// checked.
	SideRefs(side string, ids []string) (refs []session.SideRef, warnings []string)
}

// SideClearer is implemented by the homes whose side references cleanup
// clears when their session is removed (kimi.json's last_session_id is set
// to null, as Kimi does for an empty session). The file is rewritten
// atomically, changing nothing else, and only if it did not change meanwhile.
type SideClearer interface {
	ClearSideRefs(path string, ids []string) error
}

// findSideRefs asks each planned session's home for references to it from
// outside it.
func (p *Plan) findSideRefs() {
	type group struct {
		home SideFiles
		ids  []string
	}
	groups := map[string]*group{} // agent + side file -> sessions
	sides := map[string]string{}  // agent + root + dir of main -> side file
	type stat struct {
		ok   bool
		mode os.FileMode
	}
	stats := map[string]stat{}
	lstat := func(p string) stat {
		st, seen := stats[p]
		if !seen {
			if fi, err := os.Lstat(p); err == nil {
				st = stat{ok: true, mode: fi.Mode()}
			}
			stats[p] = st
		}
		return st
	}
	isFile := func(p string) bool { st := lstat(p); return st.ok && st.mode.IsRegular() }
	exists := func(p string) bool { return lstat(p).ok }
	for _, it := range p.Sessions {
		h, ok := session.As[SideFiles](it.Agent)
		if !ok {
			continue
		}
		dk := string(it.Agent) + "\x00" + it.Root + "\x00" + filepath.Dir(it.Main)
		side, ok := sides[dk]
		if !ok {
			side = h.SideFileOf(it.Root, it.Main, isFile, exists)
			sides[dk] = side
		}
		if side == "" {
			continue
		}
		gk := string(it.Agent) + "\x00" + side
		g := groups[gk]
		if g == nil {
			g = &group{home: h}
			groups[gk] = g
		}
		g.ids = append(g.ids, it.ID)
	}
	for _, gk := range sortedKeys(groups) {
		g := groups[gk]
		agent, side, _ := strings.Cut(gk, "\x00")
		refs, warnings := g.home.SideRefs(side, g.ids)
		p.Warnings = append(p.Warnings, warnings...)
		for _, r := range refs {
			action := ActionReport
			if _, inside := p.rootOf(r.Path); r.Clearable && inside {
				action = ActionClear // outside the roots: never changed
			}
			p.Side = append(p.Side, &SideRef{Agent: session.Agent(agent), Path: r.Path, SessionID: r.SessionID,
				What: r.What, Action: action, Status: StatusPlanned})
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
		err := clearRefs(path, refs)
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

// clearRefs has the home of the refs' agent clear them in path.
func clearRefs(path string, refs []*SideRef) error {
	c, ok := session.As[SideClearer](refs[0].Agent)
	if !ok {
		return fmt.Errorf("%s: sessctl cannot clear references of %s", path, refs[0].Agent)
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.SessionID
	}
	return c.ClearSideRefs(path, ids)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
