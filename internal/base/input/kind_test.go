package input

import (
	"io/fs"
	"testing"
)

// TestFileKind: one name for each type of file, as every message that
// refuses a file says it.
func TestFileKind(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0o644:                                     "a regular file",
		fs.ModeDir | 0o755:                        "a directory",
		fs.ModeSymlink | 0o777:                    "a symbolic link",
		fs.ModeNamedPipe | 0o600:                  "a named pipe (FIFO)",
		fs.ModeSocket | 0o755:                     "a socket",
		fs.ModeDevice | 0o600:                     "a block device",
		fs.ModeDevice | fs.ModeCharDevice | 0o666: "a character device",
		fs.ModeIrregular:                          "a special file",
	} {
		if got := FileKind(m); got != want {
			t.Errorf("FileKind(%v) = %q, want %q", m, got, want)
		}
	}
}
