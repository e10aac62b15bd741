//go:build !(linux && (amd64 || arm64))

package session

import (
	"io/fs"
	"os"
)

// dirHandle is a directory for lstatAt: here only its name.
type dirHandle struct{}

func openDir(string) (dirHandle, bool) { return dirHandle{}, false }

func (dirHandle) close() {}

// lstatAt is os.Lstat(filepath.Join(dir, name)).
func (dirHandle) lstatAt(dir, name string) (fs.FileInfo, error) {
	return os.Lstat(dir + string(os.PathSeparator) + name)
}
