package cp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// hostile is a file name that would set the terminal's title and forge a
// line of crisp's if printed as it is.
const hostile = "s\x1b]0;PWNED\x07\ncrisp: all copied\x1b[2J"

// noControls fails when s holds an escape, a bell or a line break of the
// container's (crisp's own lines end in one "\n").
func noControls(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(strings.TrimSuffix(s, "\n"), "\x1b\x07\n\r") {
		t.Errorf("%s reaches the terminal raw: %q", what, s)
	}
}

// cp's warnings name the container's files, and its errors quote them and
// the container tar's stderr: none of it reaches the terminal raw.
func TestWarningsAndErrorsAreEscaped(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	must(t, unix.Mkfifo(filepath.Join(root, "d", hostile), 0o644))
	must(t, os.Symlink("/etc/shadow", filepath.Join(root, "d", hostile+"-link")))
	d, err := OpenInRoot(root, "container ctr")
	must(t, err)
	defer func() { _ = d.Close() }()
	var stderr bytes.Buffer
	j := testJob(&stderr)
	out := t.TempDir()
	ld, err := OpenBeneath(out)
	must(t, err)
	defer func() { _ = ld.Close() }()
	must(t, j.unpackInto(context.Background(), ld, "", "d", noCount{}, func(w io.Writer) error { return packTo(d, "d", "d", w, j.warn) }))
	if n := strings.Count(stderr.String(), "crisp: cp: warning: skipping"); n != 2 {
		t.Fatalf("want 2 warnings (the pipe, the link), got %q", stderr.String())
	}
	for _, line := range strings.SplitAfter(stderr.String(), "\n") {
		noControls(t, "a warning", line)
	}

	// The container's tar failed and said so on stderr.
	err = j.explain(&execError{cmd: []string{"tar", "-c", "-f", "-", "-C", "/", hostile}, code: 2, stderr: "tar: " + hostile + ": Cannot open\n"})
	noControls(t, "an error", err.Error())
	var ee *execError
	if !errors.As(err, &ee) {
		t.Fatal("the escaped error lost its cause")
	}
	// A file name in a failure of the copy.
	noControls(t, "an error", j.explain(&os.PathError{Op: "open", Path: "/d/" + hostile, Err: unix.ENOENT}).Error())
}
