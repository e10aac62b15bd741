package jsonl

import (
	"os"

	"github.com/sessctl/sessctl/pkg/fsroot"
)

// Open opens a session file for reading. Anything that is not a regular file
// is refused at once with a *NotRegularError (errors.Is ErrNotRegular): a
// named pipe would hang in open or read, and /dev/zero or /dev/urandom would
// be read until the process is killed. The file is opened with O_NONBLOCK,
// checked with fstat and set back to blocking mode, so not even the open
// can block.
func Open(path string) (*os.File, error) { return fsroot.OpenRegular(path) }

// NotRegularError refuses a path that is not a regular file.
type NotRegularError = fsroot.NotRegularError

// ErrNotRegular matches a NotRegularError.
var ErrNotRegular = fsroot.ErrNotRegular
