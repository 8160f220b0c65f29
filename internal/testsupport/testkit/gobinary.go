package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// GoBinary is a program of this module built once per test binary, on
// first use, into a temporary folder that Remove deletes (call it from
// TestMain after m.Run).
type GoBinary struct {
	// Pkg is the package to build, relative to the repository ("./cmd/crisp").
	Pkg string
	// Static builds with CGO_ENABLED=0 and -trimpath, to run in an image.
	Static bool

	once      sync.Once
	dir, path string
	err       error
}

// Path builds the program the first time and returns its path; a failed
// build fails t (and every later caller) with the compiler's output.
func (b *GoBinary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(b.build)
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Build is Path for TestMain: the error instead of a test failure.
func (b *GoBinary) Build() (string, error) {
	b.once.Do(b.build)
	return b.path, b.err
}

func (b *GoBinary) build() {
	repo, err := RepoRoot()
	if err != nil {
		b.err = err
		return
	}
	if b.dir, b.err = os.MkdirTemp("", "crisp-test-bin-"); b.err != nil {
		return
	}
	b.path = filepath.Join(b.dir, filepath.Base(b.Pkg))
	args := []string{"build", "-o", b.path}
	if b.Static {
		args = append(args, "-trimpath")
	}
	cmd := exec.Command("go", append(args, b.Pkg)...)
	cmd.Dir = repo
	if b.Static {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.err = fmt.Errorf("go build %s: %w\n%s", b.Pkg, err, out)
	}
}

// Remove deletes the built program, best effort (a temporary folder).
func (b *GoBinary) Remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
