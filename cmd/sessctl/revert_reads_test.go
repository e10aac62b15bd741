//go:build heavy

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/session"
)

// readBytes is what this process has read so far (rchar of /proc/self/io:
// every read(2), pread(2) and the like, of any file); the test skips where
// the kernel does not say.
func readBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io to count the bytes read: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// longClaude writes a Claude Code transcript of turns turns, each a prompt
// and a long reply, with a custom-title and a cost-state every tenth turn
// (records a revert keeps after its cut), and returns it with the offsets
// at which each turn starts.
func longClaude(t *testing.T, turns int) (*session.Session, []byte, []int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "projects", "-tmp-big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var starts []int64
	parent := "null"
	words := strings.Repeat("the reply goes on \\\"quoted\\\" and on, 日本語 ✓ ", 600) // ~25 KB a reply
	for i := range turns {
		starts = append(starts, int64(b.Len()))
		ts := time.Date(2026, 11, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339Nano)
		u, a := fmt.Sprintf("u%04d-0000-4000-8000-000000000000", i), fmt.Sprintf("a%04d-0000-4000-8000-000000000000", i)
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":"prompt %d"},"uuid":%q,"timestamp":%q,"sessionId":"s","version":"2.1.330"}`+"\n", parent, i, u, ts)
		fmt.Fprintf(&b, `{"parentUuid":%q,"isSidechain":false,"type":"assistant","message":{"id":"msg_%d","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"%s"}],"usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}},"uuid":%q,"timestamp":%q,"sessionId":"s","version":"2.1.330"}`+"\n", u, i, words, a, ts)
		if i%10 == 9 {
			fmt.Fprintf(&b, `{"type":"custom-title","customTitle":"title %d","sessionId":"s"}`+"\n", i)
			fmt.Fprintf(&b, `{"type":"cost-state","sessionId":"s","totalCostUSD":%d,"modelUsage":{"claude-opus-4-8":{"inputTokens":%d,"outputTokens":%d,"cacheReadInputTokens":0,"cacheCreationInputTokens":0}}}`+"\n", i, i, 2*i)
		}
		parent = strconv.Quote(a)
	}
	p := filepath.Join(dir, "3a0b2c1d-0000-4000-8000-00000000b16f.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	return &session.Session{Agent: session.Claude, Main: p, Dir: dir}, b.Bytes(), starts
}

// TestRevertReadsTheFileTwice: a Claude revert reads the session once to
// plan it (the part it cuts off a second time, decoded in full) and once
// to copy what it keeps: at most twice the file's bytes, wherever the cut
// is. Before, it read it four times (turns, the newest cost-state, what
// leaves, the copy). Its result is the part before the cut and the
// records it keeps from after it, the newest cost-state only.
func TestRevertReadsTheFileTwice(t *testing.T) {
	const turns = 240
	const slack = 256 << 10 // the lock, the directory, the runtime
	for _, n := range []int{turns - 3, turns / 2, 1} {
		t.Run(fmt.Sprintf("turn %d", n), func(t *testing.T) {
			s, orig, starts := longClaude(t, turns)
			size, cut := int64(len(orig)), starts[n]
			env, out := testEnv()
			before := readBytes(t)
			if err := runRevert(context.Background(), env, s, revertOptions{n: n, mechanism: checkpoint.Auto, dryRun: true, json: true}); err != nil {
				t.Fatal(err)
			}
			planned := readBytes(t) - before
			var res struct {
				Plan struct {
					Cut int64 `json:"cut"`
				} `json:"plan"`
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			if res.Plan.Cut != cut {
				t.Fatalf("cut at %d, want %d", res.Plan.Cut, cut)
			}
			if limit := size + (size - cut) + slack; planned > limit {
				t.Errorf("the plan read %d bytes of a %d-byte file cut at %d: more than once, and the part cut off again (%d)", planned, size, cut, limit)
			}

			env, _ = testEnv()
			before = readBytes(t)
			if err := runRevert(context.Background(), env, s, revertOptions{n: n, mechanism: checkpoint.Auto}); err != nil {
				t.Fatal(err)
			}
			all := readBytes(t) - before
			if limit := 2*size + slack; all > limit {
				t.Errorf("the revert read %d bytes of a %d-byte file (cut at %d): more than twice its size (%d)", all, size, cut, limit)
			}
			t.Logf("%d-byte file cut at %d: plan read %d bytes, plan and copy %d (%.2f× the file)", size, cut, planned, all, float64(all)/float64(size))

			// what stays: the part before the cut, the titles after it,
			// and the newest cost-state after it
			want := append([]byte(nil), orig[:cut]...)
			var cost []byte
			for _, l := range bytes.SplitAfter(orig[cut:], []byte("\n")) {
				switch {
				case bytes.Contains(l, []byte(`"type":"custom-title"`)):
					want = append(want, l...)
				case bytes.Contains(l, []byte(`"type":"cost-state"`)):
					cost = l
				}
			}
			if cost != nil {
				// it is after every title: the last line of its turn
				want = append(want, cost...)
			}
			got, err := os.ReadFile(s.Main)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("reverted file: %d bytes, want %d", len(got), len(want))
			}
		})
	}
}
