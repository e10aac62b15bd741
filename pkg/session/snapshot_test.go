package session_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// memCache is a session.SnapshotCache in memory that counts what it is
// asked.
type memCache struct {
	snaps        map[string][]byte
	loads, saves int
}

func (c *memCache) LoadSnapshot(key string) io.ReadCloser {
	b, ok := c.snaps[key]
	if !ok {
		return nil
	}
	c.loads++
	return io.NopCloser(bytes.NewReader(b))
}

func (c *memCache) SaveSnapshot(key string, write func(io.Writer) error) {
	var b bytes.Buffer
	if write(&b) == nil {
		c.snaps[key] = b.Bytes()
		c.saves++
	}
}

// A discovery through a snapshot finds what a discovery without one finds,
// after every kind of change to a store, and the snapshot stands (no new
// one is stored) only while no directory and no file read for a decision
// changed: a session file that grew is taken with its new size and time.
//
// What a snapshot depends on is checked, and let go, in chunks: with
// chunks of 3, a change is in a chunk of its own, past the first. It is
// noted in chunks of bytes too: with chunks of 200 bytes, a few paths
// each.
func TestDiscoverCachedSameAsDiscover(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("discovery snapshots are kept on Linux only")
	}
	for _, chunk := range []int{256, 3} {
		t.Run(fmt.Sprintf("chunks of %d", chunk), func(t *testing.T) {
			defer session.SetSnapChunk(session.SetSnapChunk(chunk))
			if chunk == 3 {
				defer session.SetRecChunk(session.SetRecChunk(200))
			}
			discoverCachedSameAsDiscover(t)
		})
	}
}

func discoverCachedSameAsDiscover(t *testing.T) {
	defer session.SetSnapshotSettle(session.SetSnapshotSettle(0))
	// packed from the 20th session of the 100: some are values when the
	// walk starts packing
	defer func(old int) { session.PackFrom = old }(session.PackFrom)
	session.PackFrom = 20
	root := t.TempDir()
	claude := filepath.Join(root, "claude")
	proj := filepath.Join(claude, "projects", "-home-u-p")
	kimi := filepath.Join(root, "kimi")
	write := func(p, s string) { t.Helper(); writeFile(t, p, s) }
	appendTo := func(p, s string) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	line := func(id string, i int) string {
		return fmt.Sprintf(`{"type":"user","sessionId":"%s","cwd":"/home/u/p","message":{"role":"user","content":"hi %d"},"uuid":"u%d","timestamp":"2026-11-01T10:00:00Z"}`+"\n", id, i, i)
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		main := filepath.Join(proj, ids[i]+".jsonl")
		write(main, line(ids[i], i))
		switch i % 5 {
		case 1:
			write(filepath.Join(proj, ids[i], "subagents", "agent-a1.jsonl"), line(ids[i], i))
		case 2:
			write(main+".1", line(ids[i], i))
		case 3:
			write(filepath.Join(claude, "file-history", ids[i], "f@v1"), "old")
		case 4:
			write(filepath.Join(proj, fmt.Sprintf("agent-%04d.jsonl", i)), line(ids[i], i))
		}
	}
	kimiSession := filepath.Join(kimi, "sessions", session.KimiWorkDirHash("/w"), "s1")
	write(filepath.Join(kimiSession, "context.jsonl"), `{"role":"user","content":"hi"}`+"\n")
	write(filepath.Join(kimi, "kimi.json"), `{"work_dirs":[{"path":"/w"}]}`)
	write(filepath.Join(root, "other", "x.jsonl"), `{"what":"unknown"}`+"\n")
	roots := []session.Root{{Path: claude, Agent: session.Claude}, {Path: kimi, Agent: session.Kimi},
		{Path: filepath.Join(root, "other")}, {Path: filepath.Join(root, "missing")}}

	c := &memCache{snaps: map[string][]byte{}}
	cp := &memCache{snaps: map[string][]byte{}} // DiscoverCachedPacked's
	step := func(what string, wantHit bool) {
		t.Helper()
		time.Sleep(30 * time.Millisecond) // a change after this gets a later time
		loads, saves := c.loads, c.saves
		ploads, psaves := cp.loads, cp.saves
		got := session.DiscoverCached(roots, true, c)
		want := session.Discover(roots, true)
		// packed, through a snapshot and without: the same sessions
		for _, p := range []*session.Result{session.DiscoverCachedPacked(roots, true, cp), session.DiscoverPacked(roots, true)} {
			if p.Packed == nil || p.Sessions != nil {
				t.Fatalf("%s: the sessions are not packed", what)
			}
			unpacked := &session.Result{Sessions: session.Sessions(p.Packed), Unrecognized: p.Unrecognized, Errors: p.Errors}
			if !reflect.DeepEqual(unpacked, want) {
				for i := range min(len(unpacked.Sessions), len(want.Sessions)) {
					if !reflect.DeepEqual(unpacked.Sessions[i], want.Sessions[i]) {
						t.Fatalf("%s: packed session %d differs:\npacked %+v\nwant   %+v", what, i, unpacked.Sessions[i], want.Sessions[i])
					}
				}
				t.Fatalf("%s: packed results differ: %d sessions %v %v, want %d %v %v", what, len(unpacked.Sessions), p.Unrecognized,
					p.Errors, len(want.Sessions), want.Unrecognized, want.Errors)
			}
		}
		if hit := cp.loads > ploads && cp.saves == psaves; hit != wantHit {
			t.Fatalf("%s: packed, snapshot taken %v, want %v", what, hit, wantHit)
		}
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got.Sessions), len(want.Sessions)) {
				if !reflect.DeepEqual(got.Sessions[i], want.Sessions[i]) {
					t.Fatalf("%s: session %d differs:\ncached %+v\nwant   %+v", what, i, got.Sessions[i], want.Sessions[i])
				}
			}
			t.Fatalf("%s: results differ: cached %d sessions %v %v, want %d %v %v", what, len(got.Sessions), got.Unrecognized,
				got.Errors, len(want.Sessions), want.Unrecognized, want.Errors)
		}
		if hit := c.loads > loads && c.saves == saves; hit != wantHit {
			t.Fatalf("%s: snapshot taken %v, want %v", what, hit, wantHit)
		}
	}
	step("first run", false)
	if len(c.snaps) != 1 {
		t.Fatalf("%d snapshots stored, want 1", len(c.snaps))
	}
	step("nothing changed", true)
	appendTo(filepath.Join(proj, ids[0]+".jsonl"), line(ids[0], 1000))
	appendTo(filepath.Join(proj, ids[1], "subagents", "agent-a1.jsonl"), line(ids[1], 1001))
	appendTo(filepath.Join(kimiSession, "context.jsonl"), `{"role":"assistant","content":"yo"}`+"\n")
	step("session files grew", true)
	step("nothing changed since", true)

	changes := []struct {
		what   string
		change func()
	}{
		{"a new session", func() { write(filepath.Join(proj, "ffffffff-0000-4000-8000-000000000001.jsonl"), line("new", 1)) }},
		{"a new subagent", func() { write(filepath.Join(proj, ids[1], "subagents", "agent-a2.jsonl"), line(ids[1], 2)) }},
		{"a new sidecar", func() { write(filepath.Join(proj, ids[5], "subagents", "agent-x.jsonl"), line(ids[5], 2)) }},
		{"a removed rotation", func() { os.Remove(filepath.Join(proj, ids[2]+".jsonl.1")) }},
		{"a file replaced by a rename", func() {
			p := filepath.Join(proj, ids[6]+".jsonl")
			write(p+".tmp", line(ids[6], 6))
			os.Rename(p+".tmp", p)
		}},
		{"a file-history file grew", func() { appendTo(filepath.Join(claude, "file-history", ids[3], "f@v1"), "more") }},
		{"a flat agent file's head", func() { write(filepath.Join(proj, "agent-0004.jsonl"), line(ids[9], 4)) }},
		{"kimi.json", func() { write(filepath.Join(kimi, "kimi.json"), `{"work_dirs":[{"path":"/elsewhere"}]}`) }},
		{"an unknown file got known content", func() { write(filepath.Join(root, "other", "x.jsonl"), line(ids[7], 7)) }},
		{"a missing root appeared", func() { write(filepath.Join(root, "missing", "y.jsonl"), line(ids[8], 8)) }},
	}
	for _, ch := range changes {
		ch.change()
		step(ch.what, false)
		step(ch.what+", then nothing", true)
	}

	// a damaged snapshot is not taken
	for k, b := range c.snaps {
		for _, cut := range []int{0, 1, len(b) / 2, len(b) - 1} {
			c.snaps[k] = b[:cut]
			cp.snaps[k] = b[:cut]
			step(fmt.Sprintf("snapshot cut at %d", cut), false)
		}
	}
}

// A snapshot is stored only when nothing it depends on changed within
// snapshotSettle of the discovery: a change in the same tick of the
// clock would otherwise leave its directory's times as they were.
func TestDiscoverCachedSettles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("discovery snapshots are kept on Linux only")
	}
	root := t.TempDir()
	p := filepath.Join(root, "projects", "-p", "00000000-0000-4000-8000-000000000000.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"type":"user","sessionId":"00000000-0000-4000-8000-000000000000","message":{"role":"user","content":"hi"},"uuid":"u","timestamp":"2026-11-01T10:00:00Z"}`+"\n"), 0o600)
	c := &memCache{snaps: map[string][]byte{}}
	res := session.DiscoverCached([]session.Root{{Path: root, Agent: session.Claude}}, false, c)
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(res.Sessions))
	}
	if c.saves != 0 {
		t.Fatal("a snapshot of a store changed just now was stored")
	}
}

// writeFile writes s to p, making its directories.
func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
