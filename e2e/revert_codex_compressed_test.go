package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/pkg/agent/codex"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestRevertCompressedCodexRollout: a rollout that Codex's own rollout
// maintenance compressed (it compresses rollouts untouched for 7 days when
// it starts) is reverted by sessctl; the real Codex resumes it at the right
// turn, from the plain file sessctl wrote, and the compressed original is
// kept as the rotation.
func TestRevertCompressedCodexRollout(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := codexABC(t, h)
	plain, z := codexCompress(t, h, id, path)
	zst := path + ".zst"
	// sessctl reads it like the plain file
	wantTexts(t, "live turns of the compressed rollout", checkpoints(t, zst).livePreviews(), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"})

	out := h.Revert(zst, 2)
	t.Logf("sessctl revert:\n%s", out)
	if _, err := os.Stat(zst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the .zst is still there after the revert (%v)", err)
	}
	after := h.ReadFile(path)
	if !bytes.HasPrefix(after, plain) || !bytes.Contains(after[len(plain):], []byte(`"type":"thread_rolled_back","num_turns":1`)) {
		t.Fatalf("the plain rollout is not the content plus a rollback: %q", after[min(len(after), len(plain)):])
	}
	if got := h.ReadFile(zst + ".1"); !bytes.Equal(got, z) {
		t.Errorf("the rotation %s.1 is not Codex's compressed file byte for byte", zst)
	}
	wantTexts(t, "live turns after the revert", checkpoints(t, path).livePreviews(), []string{"NOTOOL turn A", "NOTOOL turn B"})

	mark := h.Mark()
	if out := h.CodexResume(id, "NOTOOL turn D"); !strings.Contains(out, "ACK: NOTOOL turn D") {
		t.Errorf("turn D answered %q", out)
	}
	wantTexts(t, "turn D request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"})
	h.AssertAppendOnly(path, after)
	if _, err := os.Stat(zst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Codex's resume left a .zst beside the plain file (%v)", err)
	}
}

// codexCompress ages the rollout at path by 8 days and has Codex compress
// it: a new thread started with the local_thread_store_compression feature
// runs Codex's rollout maintenance (it compresses rollouts untouched for 7
// days, in the background). It returns the plain content and Codex's .zst.
func codexCompress(t *testing.T, h *Harness, id, path string) (plain, z []byte) {
	t.Helper()
	plain = h.ReadFile(path)
	old := time.Now().Add(-8 * 24 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	h.CodexExec("NOTOOL another thread", "-c", "features.local_thread_store_compression=true")
	zst := path + ".zst"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("Codex did not compress the aged rollout %s", path)
	}
	if got := h.CodexSessionFile(id); got != zst {
		t.Fatalf("the session file is %s, want Codex's %s", got, zst)
	}
	z = h.ReadFile(zst)
	dec, _ := zstd.NewReader(nil)
	if content, err := dec.DecodeAll(z, nil); err != nil || !bytes.Equal(content, plain) {
		t.Fatalf("Codex's .zst does not hold the rollout (%v)", err)
	}
	return plain, z
}

// TestCodexResumesCompressedRollout: Codex resumes a rollout it compressed
// by decompressing it to the plain file first; the history it sends is what
// sessctl show reads from the .zst (the oracle in CodexResume).
func TestCodexResumesCompressedRollout(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := codexABC(t, h)
	plain, _ := codexCompress(t, h, id, path)
	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn D")
	wantTexts(t, "turn D request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C", "NOTOOL turn D"})
	if _, err := os.Stat(path + ".zst"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the .zst is still there after Codex appended (%v)", err)
	}
	if after := h.ReadFile(path); !bytes.HasPrefix(after, plain) {
		t.Error("Codex's plain file does not start with the compressed content")
	}
}

// TestCompactCompressedCodexRollout: sessctl compact on a rollout Codex
// compressed itself writes the plain file (the content plus the compacted
// record), keeps Codex's .zst as the rotation, and Codex resumes from the
// compaction: the summary, the kept turn and the new prompt.
func TestCompactCompressedCodexRollout(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("Please list the files here OLDONE " + padding)
	h.CodexResume(id, "NOTOOL second turn OLDTWO "+padding)
	h.CodexResume(id, "NOTOOL third turn KEEPTHREE")
	path := h.CodexSessionFile(id)
	plain, z := codexCompress(t, h, id, path)
	zst := path + ".zst"

	res := compactFile(t, zst, session.Codex, 2, 50)
	if res.NewPath != path {
		t.Errorf("compact says the session is now %q, want %q", res.NewPath, path)
	}
	if _, err := os.Stat(zst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the .zst is still there after the compaction (%v)", err)
	}
	compacted := h.ReadFile(path)
	if !bytes.HasPrefix(compacted, plain) || len(compacted) == len(plain) {
		t.Fatal("the plain file is not the content plus the compaction")
	}
	if !bytes.Equal(h.ReadFile(res.Original), z) {
		t.Errorf("the rotation %s is not Codex's .zst byte for byte", res.Original)
	}
	checkClean(t, path, session.Codex)

	mark := h.Mark()
	if out := h.CodexResume(id, "NOTOOL fourth turn NEWFOUR"); !strings.Contains(out, "ACK: NOTOOL fourth turn NEWFOUR") {
		t.Errorf("turn 4 answered %q", out)
	}
	texts := h.UserTexts(h.FirstModelCallSince(mark))
	if len(texts) != 3 || !strings.HasPrefix(texts[0], codex.SummaryPrefix+"\n") ||
		texts[1] != "NOTOOL third turn KEEPTHREE" || texts[2] != "NOTOOL fourth turn NEWFOUR" {
		t.Errorf("user texts of the resumed request:\n%q", texts)
	}
}
