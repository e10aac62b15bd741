package repair

import (
	"fmt"
	"hash/maphash"

	"github.com/sessctl/sessctl/pkg/session"
)

// Links mends the conversation tree of a format whose records name their
// parent by uuid (Claude Code, clawdcode), for the homes' Menders:
//
//   - A tool result whose call is nowhere in the file (compaction or a cut
//     took the call away) is an orphan: the API refuses it. A record that
//     holds nothing but orphans leaves the file (the client would never
//     have written it); otherwise the home's Strip removes the orphan
//     results from it.
//   - A record whose parent is not in the file (a garbled or removed line)
//     is relinked to the entry written before it on the same side (main or
//     sidechain): the parent the client gives a record it appends. A record
//     whose parent left the file as an orphan is relinked to that record's
//     own parent, so that the walk from the leaf reaches everything that
//     survives.
//
// Memory is a hash per uuid and per tool call of the file (8 bytes each),
// plus what is kept of each damaged record.
type Links struct {
	// Strip returns the record raw without the tool results that answer
	// the calls ids, or nil when nothing else is left of it.
	Strip func(raw []byte, ids map[string]bool) ([]byte, error)
	// SetParent returns the record raw with its parent link set to parent
	// ("" for none), written as the client writes it.
	SetParent func(raw []byte, parent string) ([]byte, error)

	seed    maphash.Seed
	uuids   map[uint64]struct{}
	calls   map[uint64]struct{}
	last    [2]string // newest entry per side: 0 main, 1 sidechain
	parents []brokenParent
	orphans []*orphan
	byUUID  map[string]*orphan
}

type brokenParent struct {
	line   int
	off    int64
	uuid   string
	parent string // as written
	relink string // the entry before it on its side
}

type orphan struct {
	line     int
	off      int64
	uuid     string
	parent   string
	relink   string // the entry before it on its side
	size     int64  // the line with its terminator
	ids      []string
	results  int  // tool results in the record
	only     bool // the record holds nothing but tool results
	gone     bool // it leaves the file
	children []brokenParent
}

func (k *Links) init() {
	if k.uuids == nil {
		k.seed = maphash.MakeSeed()
		k.uuids = map[uint64]struct{}{}
		k.calls = map[uint64]struct{}{}
		k.byUUID = map[string]*orphan{}
	}
}

// Record follows one record in file order. entry says whether a record
// appended after it would name it as its parent (a conversation entry, not
// a progress line); onlyResults whether it holds nothing but tool results.
func (k *Links) Record(r *session.Record, entry, onlyResults bool) {
	k.init()
	for _, c := range r.ToolCalls {
		if c.ID != "" {
			k.calls[maphash.String(k.seed, c.ID)] = struct{}{}
		}
	}
	side := 0
	if r.Sidechain {
		side = 1
	}
	var ids []string
	for _, res := range r.ToolResults {
		if res.CallID == "" {
			continue
		}
		if _, ok := k.calls[maphash.String(k.seed, res.CallID)]; !ok {
			ids = append(ids, res.CallID)
		}
	}
	if len(ids) > 0 {
		o := &orphan{line: r.Line.Num, off: r.Line.Offset, size: r.Line.Len + int64(r.Line.EOL.Len()),
			uuid: r.UUID, parent: r.ParentUUID, relink: k.last[side], ids: ids, results: len(r.ToolResults), only: onlyResults}
		k.orphans = append(k.orphans, o)
		if r.UUID != "" {
			k.byUUID[r.UUID] = o
		}
	}
	if p := r.ParentUUID; p != "" {
		b := brokenParent{line: r.Line.Num, off: r.Line.Offset, uuid: r.UUID, parent: p, relink: k.last[side]}
		if o := k.byUUID[p]; o != nil {
			o.children = append(o.children, b)
		} else if _, ok := k.uuids[maphash.String(k.seed, p)]; !ok {
			k.parents = append(k.parents, b)
		}
	}
	if r.UUID != "" {
		k.uuids[maphash.String(k.seed, r.UUID)] = struct{}{}
		if entry {
			k.last[side] = r.UUID
		}
	}
}

// End returns the fixes, once the whole file has been seen (a call or a
// parent may come after the record that names it), and Resolve, which maps
// a uuid that leaves the file to the one that takes its place.
func (k *Links) End() (fixes []Fix, resolve func(string) string) {
	k.init()
	gone := map[string]string{} // uuid of a record that leaves -> its parent
	for _, o := range k.orphans {
		var ids []string
		for _, id := range o.ids {
			if _, ok := k.calls[maphash.String(k.seed, id)]; !ok {
				ids = append(ids, id) // the call never came
			}
		}
		o.ids = ids
		if len(ids) > 0 && o.only && len(ids) == o.results {
			o.gone = true
			if o.uuid != "" {
				// what takes its place: its parent, or when that is not in
				// the file either, the entry before it
				gone[o.uuid] = o.parent
				if _, ok := k.uuids[maphash.String(k.seed, o.parent)]; !ok {
					gone[o.uuid] = o.relink
				}
			}
		}
	}
	resolve = func(u string) string {
		for i := 0; i < 1<<16; i++ { // a cycle of gone records cannot hold us
			p, ok := gone[u]
			if !ok {
				return u
			}
			u = p
		}
		return ""
	}
	for _, o := range k.orphans {
		if len(o.ids) == 0 {
			continue
		}
		set := map[string]bool{}
		for _, id := range o.ids {
			set[id] = true
		}
		strip := k.Strip
		what := fmt.Sprintf("the tool result for %s answers a call that is not in the file: removed", o.ids[0])
		if len(o.ids) > 1 {
			what = fmt.Sprintf("%d tool results answer calls that are not in the file: removed", len(o.ids))
		}
		switch {
		case o.gone:
			fixes = append(fixes, Fix{Line: o.line, Offset: o.off, Kind: KindOrphan, drop: true, RemovedBytes: o.size,
				Reason: what + "; nothing else is left of the record, so it leaves the file"})
		case strip != nil:
			fixes = append(fixes, Edit(o.line, o.off, KindOrphan, what, func(raw []byte) ([]byte, error) { return strip(raw, set) }))
		}
		if !o.gone {
			continue
		}
		for _, c := range o.children {
			to := resolve(o.uuid)
			fixes = append(fixes, k.relink(c, to, fmt.Sprintf("its parent %s left the file (an orphan tool result, line %d): relinked to %s",
				c.parent, o.line, describe(to))))
		}
	}
	for _, b := range k.parents {
		if _, ok := k.uuids[maphash.String(k.seed, b.parent)]; ok {
			continue // written after its child: the client finds it
		}
		if _, isGone := gone[b.uuid]; isGone && b.uuid != "" {
			continue // the record itself leaves the file
		}
		to := resolve(b.relink)
		fixes = append(fixes, k.relink(b, to, fmt.Sprintf("parentUuid %s is not a record of this file: relinked to %s, the entry written before it",
			b.parent, describe(to))))
	}
	return fixes, resolve
}

func (k *Links) relink(b brokenParent, to, reason string) Fix {
	set := k.SetParent
	return Edit(b.line, b.off, KindParent, reason, func(raw []byte) ([]byte, error) { return set(raw, to) })
}

func describe(uuid string) string {
	if uuid == "" {
		return "none (the record starts the conversation)"
	}
	return uuid
}
