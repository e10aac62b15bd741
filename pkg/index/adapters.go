package index

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// The kinds of value stored.
const (
	kindSummary     Kind = 'S' // a session.FileSummary, continued when the file grows
	kindFirstPrompt Kind = 'F' // the first user prompt of a rotation
	kindUsage       Kind = 'U' // a usage.FileUsage
	kindLiveMap     Kind = 'L' // a home's live map of a file (session.LiveMapCache)
	kindHeadID      Kind = 'H' // the first record id of a session's main transcript (HeadOf "first-id")
	kindHeadCWD     Kind = 'W' // the working directory its head names (HeadOf "cwd")
)

// headKinds are the kinds of the strings HeadOf keeps, by name: each its
// own, as an entry holds one value of a kind.
var headKinds = map[string]Kind{"first-id": kindHeadID, "cwd": kindHeadCWD}

// HeadOf returns read(s), a string read from the head of session s's main
// transcript and named by name ("first-id": du's fork groups; "cwd": the
// real working directory of stats --by project and du --by project),
// through the index: read is called only when the main file is new to it or
// has changed. A nil Index, or another name, reads.
func (ix *Index) HeadOf(s *session.Session, name string, read func(*session.Session) string) string {
	kind, ok := headKinds[name]
	if !ok {
		return read(s)
	}
	b, _ := ix.GetFile(s.Main, fileID(s.MainFile()), kind, string(s.Agent)+"/"+name, func([]byte, int64) ([]byte, []byte, int64, error) {
		return []byte(read(s)), nil, 0, nil
	})
	return string(b)
}

// Summaries returns the source of per-file summaries for
// session.SummarizeWith that reads through the index. It reads the files
// when ix is nil.
func (ix *Index) Summaries() session.FileSummaries { return summaries{ix} }

type summaries struct{ ix *Index }

func (s summaries) FileSummary(a session.Agent, f session.File, mode session.SummaryMode) (session.FileSummary, error) {
	tag := string(a) + "/" + string(rune('0'+mode))
	var end session.FileSummary
	path := f.Path
	b, err := s.ix.GetFile(path, fileID(f), kindSummary, tag, func(state []byte, from int64) ([]byte, []byte, int64, error) {
		var prev session.FileSummary
		if from > 0 {
			if !decodeSummary(state, &prev) {
				from, prev = 0, session.FileSummary{}
			}
		}
		var resume session.FileSummary
		var at int64
		var err error
		end, resume, at, err = session.ReadFileSummary(a, path, mode, prev, from)
		return encodeSummary(&end), encodeSummary(&resume), at, err
	})
	if err != nil {
		return end, err
	}
	var out session.FileSummary
	if !decodeSummary(b, &out) {
		return end, errors.New("index: bad summary")
	}
	return out, nil
}

func (s summaries) FirstPrompt(a session.Agent, f session.File) string {
	b, _ := s.ix.GetFile(f.Path, fileID(f), kindFirstPrompt, string(a), func([]byte, int64) ([]byte, []byte, int64, error) {
		return []byte(session.Direct.FirstPrompt(a, f)), nil, 0, nil
	})
	return string(b)
}

// fileID is f's identity as discovery found it, nil when not known.
func fileID(f session.File) *FileID {
	dev, ino, ok := f.Identity()
	if !ok {
		return nil
	}
	return &FileID{Dev: dev, Ino: ino, Size: f.Size, MTime: f.ModTime.UnixNano()}
}

func encodeSummary(s *session.FileSummary) []byte {
	b := make([]byte, 0, 64+len(s.CWD)+len(s.CustomTitle)+len(s.AITitle)+len(s.SummaryTitle)+len(s.FirstPrompt))
	for _, v := range []int64{int64(s.Lines), int64(s.Records), int64(s.Corrupt)} {
		b = binary.AppendVarint(b, v)
	}
	// MarshalBinary keeps the zone offset, which ls --json shows
	started, _ := s.Started.MarshalBinary()
	// the titles are only ever shown through session.OneLine: stored
	// collapsed, they are smaller and OneLine has nothing left to do
	for _, t := range []string{string(started), s.CWD, oneLine(s.CustomTitle), oneLine(s.AITitle), oneLine(s.SummaryTitle), oneLine(s.FirstPrompt)} {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	return b
}

// oneLine is session.OneLine, except that a text of white space only stays
// not empty (" "): SummarizeWith tells "no prompt" ("") from a blank one.
func oneLine(t string) string {
	if o := session.OneLine(t); o != "" || t == "" {
		return o
	}
	return " "
}

func decodeSummary(b []byte, s *session.FileSummary) bool {
	var n [3]int64
	for i := range n {
		v, k := binary.Varint(b)
		if k <= 0 {
			return false
		}
		n[i], b = v, b[k:]
	}
	// one string for the six texts, each a slice of it: one allocation
	// a summary instead of six (a warm ls decodes 100,000 of them)
	all := string(b)
	off := 0
	var t [6]string
	for i := range t {
		l, k := binary.Uvarint(b[off:])
		if k <= 0 || l > uint64(len(b)-off-k) {
			return false
		}
		t[i] = all[off+k : off+k+int(l)]
		off += k + int(l)
	}
	if off != len(b) {
		return false
	}
	*s = session.FileSummary{Lines: int(n[0]), Records: int(n[1]), Corrupt: int(n[2]),
		CWD: t[1], CustomTitle: t[2], AITitle: t[3], SummaryTitle: t[4], FirstPrompt: t[5]}
	return s.Started.UnmarshalBinary([]byte(t[0])) == nil
}

// ReadUsage is usage.Reader.ReadFile through the index: a file that has not
// changed since it was scanned is not read again. agent names the scanner.
func (ix *Index) ReadUsage(ctx context.Context, rd *usage.Reader, path string, agent session.Agent, sc usage.Scanner, class usage.FileClass) (*usage.FileUsage, error) {
	if ix == nil {
		return rd.ReadFile(ctx, path, sc, class)
	}
	var fu *usage.FileUsage
	tag := string(agent) + "/" + string(rune('0'+class))
	b, err := ix.Get(path, kindUsage, tag, func([]byte, int64) ([]byte, []byte, int64, error) {
		var err error
		fu, err = rd.ReadFile(ctx, path, sc, class)
		if err != nil {
			return nil, nil, 0, err
		}
		if ctx.Err() != nil {
			// a scan cut short is not the file's usage
			return nil, nil, 0, ctx.Err()
		}
		b, err := fu.MarshalBinary()
		return b, nil, 0, err
	})
	if err != nil || fu != nil {
		return fu, err
	}
	if fu, err = rd.Decode(b, path, class); err != nil {
		return rd.ReadFile(ctx, path, sc, class)
	}
	return fu, nil
}

// LiveMap implements session.LiveMapCache: the live map stored for the file at
// path under tag while the file is unchanged, else what build makes (not
// continued when the file grows: a live map is of the whole file).
func (ix *Index) LiveMap(path, tag string, build func() ([]byte, error)) ([]byte, error) {
	return ix.Get(path, kindLiveMap, tag, func([]byte, int64) ([]byte, []byte, int64, error) {
		v, err := build()
		return v, nil, 0, err
	})
}
