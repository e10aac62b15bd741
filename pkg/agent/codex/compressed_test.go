package codex

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// The rollout Codex 0.169 compressed itself reads as its content (as the
// zstd command line decompresses it), is a Codex session, and has the id
// of its plain name.
func TestCodexCompressedRollout(t *testing.T) {
	zs, _ := filepath.Glob("testdata/compressed/rollout-*.jsonl.zst")
	if len(zs) != 1 {
		t.Fatalf("fixture: %v", zs)
	}
	z := zs[0]
	want, err := os.ReadFile(strings.TrimSuffix(z, ".zst") + ".content")
	if err != nil {
		t.Fatal(err)
	}
	f, err := jsonl.Open(z)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("content differs from zstd -d (%d vs %d bytes, %v)", len(got), len(want), err)
	}
	if a, err := session.DetectFile(z); err != nil || a != session.Codex {
		t.Errorf("detected %v (%v)", a, err)
	}
	if (Home{}).PathVote(z) != session.Sure {
		t.Error("the path of a compressed rollout is not Codex's")
	}
	if id := (Home{}).SessionID(filepath.Base(z)); id != "01a21581-c639-75a1-bf8e-5789fe98903a" {
		t.Errorf("id %q", id)
	}
	if !session.ReadsCompressed(session.Codex) || session.ReadsCompressed(session.Claude) {
		t.Error("only Codex keeps compressed sessions")
	}
}
