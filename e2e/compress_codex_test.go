package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestCodexResumesSessctlCompressedRollout: sessctl compress turns an aged
// rollout into rollout-….jsonl.zst (mode and mtime kept, the plain file
// removed); the real Codex resumes it, sending the history `sessctl show`
// predicts from the .zst (the oracle in CodexResume), and makes it plain
// again before it appends, as it does with the files it compresses itself.
func TestCodexResumesSessctlCompressedRollout(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := codexABC(t, h)
	plain := h.ReadFile(path)
	old := time.Now().Add(-8 * 24 * time.Hour).Truncate(time.Second).Add(123456789)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	out := h.Sessctl("compress", "--root", filepath.Join(h.Home, ".codex"))
	t.Logf("sessctl compress:\n%s", out)
	zst := path + ".zst"
	if !strings.Contains(out, "compressed 1 session") {
		t.Errorf("sessctl compress did not say it compressed the rollout")
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the plain rollout is still there (%v)", err)
	}
	if got := h.CodexSessionFile(id); got != zst {
		t.Fatalf("the session file is %s, want %s", got, zst)
	}
	fi, err := os.Stat(zst)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(before.ModTime()) || fi.Mode() != before.Mode() {
		t.Errorf(".zst mtime %v mode %v, want the rollout's %v %v", fi.ModTime(), fi.Mode(), before.ModTime(), before.Mode())
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	if content, err := dec.DecodeAll(h.ReadFile(zst), nil); err != nil || !bytes.Equal(content, plain) {
		t.Fatalf("the .zst does not hold the rollout byte for byte (%v)", err)
	}
	wantTexts(t, "live turns of the compressed rollout", checkpoints(t, zst).livePreviews(), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"})

	// Codex resumes it: the oracle holds the request to `sessctl show` of
	// the .zst
	mark := h.Mark()
	if out := h.CodexResume(id, "NOTOOL turn D"); !strings.Contains(out, "ACK: NOTOOL turn D") {
		t.Errorf("turn D answered %q", out)
	}
	wantTexts(t, "turn D request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C", "NOTOOL turn D"})
	if _, err := os.Stat(zst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the .zst is still there after Codex appended (%v)", err)
	}
	if after := h.ReadFile(path); !bytes.HasPrefix(after, plain) || len(after) == len(plain) {
		t.Error("Codex's plain file is not the compressed content plus turn D")
	}
}
