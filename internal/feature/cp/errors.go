package cp

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
)

// explain adds to a failed copy what it means and what to do, by its
// cause: the same causes read the same whichever way the copy went.
// Nothing partial is left by then (unpackInto removed it).
func (j *job) explain(err error) error {
	if err == nil {
		return nil
	}
	return escaped{j.cause(err)}
}

// escaped is an error whose text quotes the container's file names and
// its tar's stderr: it is shown escaped (termsafe.Printable: no control,
// no line break of theirs), while errors.Is and As still see the cause.
type escaped struct{ err error }

func (e escaped) Error() string { return termsafe.Printable(e.err.Error()) }
func (e escaped) Unwrap() error { return e.err }

func (j *job) cause(err error) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, "cp: ") {
		err = fmt.Errorf("cp: %w", err)
	}
	var ee *execError
	text := ""
	if errors.As(err, &ee) {
		text = strings.ToLower(ee.stderr)
	}
	switch {
	case ee != nil && ee.missing():
		return fmt.Errorf("%w (the container has no tar: --way root copies through the node's view of its root, run on the node as root)", err)
	case errors.Is(err, unix.ENOSPC) || strings.Contains(text, "no space left"):
		return fmt.Errorf("%w (no space left on the device: nothing was left behind; free some space or copy elsewhere)", err)
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) ||
		strings.Contains(text, "permission denied") || strings.Contains(text, "read-only file system"):
		return fmt.Errorf("%w (permission denied: copy as a user who may write there, or to another place)", err)
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%w (a symlink or .. on the way would lead outside the copy's directory: cp does not follow it)", err)
	case errors.Is(err, unix.ENOENT) || strings.Contains(text, "no such file"):
		return fmt.Errorf("%w (no such file or directory: check the path)", err)
	case errors.Is(err, errRefusedEntry):
		return fmt.Errorf("%w (the container's tar sent what crisp does not unpack: nothing was written)", err)
	case errors.Is(err, errTooLarge):
		return fmt.Errorf("%w (nothing was written; raise --size-limit to copy it)", err)
	case errors.Is(err, errUnsafeEntry):
		return fmt.Errorf("%w (the archive tried to write outside the destination: nothing was written)", err)
	}
	return err
}
