package session

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"
)

// A session's files are most of what discovery holds: a File fits the
// allocator's 80-byte class (a string role made it 96).
func TestFileSize(t *testing.T) {
	if n := unsafe.Sizeof(File{}); n > 80 {
		t.Fatalf("a File is %d bytes", n)
	}
}

// A role is written, and read back, by its name, as when it was a string.
func TestFileRoleJSON(t *testing.T) {
	for _, r := range []FileRole{0, FileMain, FileRotation, FileSubagent, FileWire, FileSide} {
		b, err := json.Marshal(File{Path: "/p", Role: r, Rotation: 3})
		if err != nil {
			t.Fatal(err)
		}
		if want := `"role":"` + r.String() + `"`; !strings.Contains(string(b), want) {
			t.Errorf("%s, want %s", b, want)
		}
		var f File
		if err := json.Unmarshal(b, &f); err != nil || f.Role != r || f.Rotation != 3 {
			t.Errorf("%s read back as %+v (%v)", b, f, err)
		}
	}
	if names := []string{FileMain.String(), FileRotation.String(), FileSubagent.String(), FileWire.String(), FileSide.String()}; strings.Join(names, " ") != "main rotation subagent wire side" {
		t.Errorf("names %v", names)
	}
	var f File
	if err := json.Unmarshal([]byte(`{"role":"owner"}`), &f); err == nil {
		t.Errorf("an unknown role read as %v", f.Role)
	}
}
