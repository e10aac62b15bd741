package kimicode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSideRefs(t *testing.T) {
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	path := wirePath(t)
	store := Home{}.SideFileOf("", path, exists, exists)
	if !exists(filepath.Join(store, "session_index.jsonl")) {
		t.Fatalf("SideFileOf = %q", store)
	}
	refs, warn := Home{}.SideRefs(store, []string{sessionID, "session_other"})
	if len(warn) != 0 || len(refs) != 1 || refs[0].SessionID != sessionID || refs[0].Clearable ||
		!strings.HasSuffix(refs[0].Path, "session_index.jsonl") {
		t.Errorf("refs %+v, warnings %v", refs, warn)
	}
}
