package cp

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// hostWithContainer builds a "host" with a secret beside a "container"
// root whose files try every way out: a symlink to /, one climbing with
// ../../, and one to the host's secret by its absolute path.
func hostWithContainer(t *testing.T) (host, root, secret string) {
	t.Helper()
	host = t.TempDir()
	secret = filepath.Join(host, "shadow")
	must(t, os.WriteFile(secret, []byte("host secret\n"), 0o600))
	root = filepath.Join(host, "ctr")
	must(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "etc", "shadow"), []byte("container shadow\n"), 0o640))
	must(t, os.Symlink("/", filepath.Join(root, "escape")))
	must(t, os.Symlink("../../../../../../shadow", filepath.Join(root, "etc", "up")))
	must(t, os.Symlink(secret, filepath.Join(root, "etc", "abs")))
	must(t, os.Symlink("/etc/shadow", filepath.Join(root, "etc", "inner")))
	return host, root, secret
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, d *Dir, name string) (string, error) {
	t.Helper()
	st, err := d.Stat(name) // follows symlinks, inside the root
	if err != nil {
		return "", err
	}
	if !st.Mode.IsRegular() {
		return "", errors.New("not a regular file")
	}
	fd, err := d.openat2(name, unix.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), name)
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(f)
	return string(b), err
}

func TestInRootResolvesEverySymlinkInsideTheRoot(t *testing.T) {
	_, root, _ := hostWithContainer(t)
	d, err := OpenInRoot(root, "ctr")
	must(t, err)
	defer func() { _ = d.Close() }()
	for _, name := range []string{
		"escape/etc/shadow", // "/" is the container's root
		"../../etc/shadow",  // .. stops at the root
		"etc/../../../../etc/shadow",
		"escape/escape/../etc/inner",
		"etc/inner", // an absolute symlink is the container's path
	} {
		got, err := readAll(t, d, name)
		if err != nil || got != "container shadow\n" {
			t.Errorf("%s: got %q, %v; want the container's own file", name, got, err)
		}
	}
	// The host's secret is out of reach by any name.
	for _, name := range []string{"etc/up", "etc/abs", "../shadow", "escape/../shadow", "escape/" + strings.TrimPrefix(filepath.Join(filepath.Dir(root), "shadow"), "/")} {
		if got, err := readAll(t, d, name); err == nil {
			t.Errorf("%s: read %q: a name reached outside the root", name, got)
		}
	}
}

func TestPackFromRootStoresSymlinksNeverTheirTargets(t *testing.T) {
	_, root, _ := hostWithContainer(t)
	d, err := OpenInRoot(root, "ctr")
	must(t, err)
	defer func() { _ = d.Close() }()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, Pack(d, "etc", "etc", tw, noCount{}, func(string) {}))
	must(t, tw.Close())
	if strings.Contains(buf.String(), "host secret") {
		t.Fatal("the host's secret was packed")
	}
	tr := tar.NewReader(&buf)
	links := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		if h.Typeflag == tar.TypeSymlink {
			links[h.Name] = h.Linkname
		}
	}
	if links["etc/up"] != "../../../../../../shadow" || links["etc/inner"] != "/etc/shadow" {
		t.Fatalf("symlinks not stored as links: %v", links)
	}
}

func TestUnpackIntoRootThroughSymlinksStaysInside(t *testing.T) {
	host, root, secret := hostWithContainer(t)
	d, err := OpenInRoot(root, "ctr")
	must(t, err)
	defer func() { _ = d.Close() }()
	// A copy in to "escape/x" (escape -> /) lands at the root's /x.
	isDir, err := Unpack(tar.NewReader(archive(t, file("x", "payload"))), d, "escape/x", Landing{})
	must(t, err)
	if isDir {
		t.Fatal("a file unpacked as a directory")
	}
	if b, err := os.ReadFile(filepath.Join(root, "x")); err != nil || string(b) != "payload" {
		t.Fatalf("root/x: %q, %v", b, err)
	}
	if _, err := os.Lstat("/x"); err == nil {
		t.Fatal("/x exists on the host")
	}
	// An archive that plants a symlink to /etc, then writes a file through
	// it, writes the container's /etc/crisp-pwned, never the host's.
	_, err = Unpack(tar.NewReader(archive(t, dir("top"), symlink("top/l", "/etc"), file("top/l/crisp-pwned", "x"))), d, "stage", Landing{})
	must(t, err)
	if _, err := os.Lstat("/etc/crisp-pwned"); err == nil {
		_ = os.Remove("/etc/crisp-pwned")
		t.Fatal("a file was written through a symlink onto the host's /etc")
	}
	if _, err := os.Lstat(filepath.Join(root, "etc", "crisp-pwned")); err != nil {
		t.Fatalf("the file did not land in the container's /etc: %v", err)
	}
	// And the host's path by name resolves to nothing.
	_, err = Unpack(tar.NewReader(archive(t, dir("top"), symlink("top/l", host), file("top/l/pwned", "x"))), d, "stage2", Landing{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("through a symlink to the host's directory: got %v, want not found (inside the root)", err)
	}
	if _, err := os.Lstat(filepath.Join(host, "pwned")); err == nil {
		t.Fatal("a file was written through a symlink onto the host")
	}
	if b, _ := os.ReadFile(secret); string(b) != "host secret\n" {
		t.Fatal("the host's secret changed")
	}
}

func TestUnpackRefusesEntriesThatClimbOut(t *testing.T) {
	for name, entries := range map[string][]entry{
		"dotdot":     {dir("top"), file("top/../../evil", "x")},
		"absolute":   {file("/evil", "x")},
		"other top":  {dir("top"), file("other/evil", "x")},
		"link out":   {dir("top"), hardlink("top/h", "../evil")},
		"plain ../":  {file("../evil", "x")},
		"child only": {file("top/evil", "x")},
	} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			dest := filepath.Join(base, "dest")
			must(t, os.Mkdir(dest, 0o755))
			d, err := OpenBeneath(dest)
			must(t, err)
			defer func() { _ = d.Close() }()
			_, err = Unpack(tar.NewReader(archive(t, entries...)), d, "stage", Landing{})
			if !errors.Is(err, errUnsafeEntry) {
				t.Fatalf("got %v, want an unsafe-entry error", err)
			}
			if _, err := os.Lstat(filepath.Join(base, "evil")); err == nil {
				t.Fatal("evil was written outside the destination")
			}
		})
	}
}

func TestBeneathFollowsNoSymlinkLocally(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	dest := filepath.Join(base, "dest")
	must(t, os.Mkdir(outside, 0o755))
	must(t, os.Mkdir(dest, 0o755))
	must(t, os.Symlink(outside, filepath.Join(dest, "evil")))
	d, err := OpenBeneath(dest)
	must(t, err)
	defer func() { _ = d.Close() }()
	// The destination's own symlink, and one the archive plants.
	if _, err := Unpack(tar.NewReader(archive(t, file("x", "x"))), d, "evil/x", Landing{}); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.EXDEV) {
		t.Fatalf("writing through dest/evil: got %v, want ELOOP or EXDEV", err)
	}
	_, err = Unpack(tar.NewReader(archive(t, dir("top"), symlink("top/l", outside), file("top/l/pwned", "x"))), d, "stage", Landing{})
	if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.EXDEV) {
		t.Fatalf("writing through a planted symlink: got %v, want ELOOP or EXDEV", err)
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Fatalf("written outside the destination: %v", names)
	}
}

// entry is one tar entry for a test archive.
type entry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) entry {
	return entry{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body}
}
func dir(name string) entry {
	return entry{hdr: tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755}}
}
func symlink(name, target string) entry {
	return entry{hdr: tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777}}
}
func hardlink(name, target string) entry {
	return entry{hdr: tar.Header{Name: name, Typeflag: tar.TypeLink, Linkname: target}}
}

func archive(t *testing.T, entries ...entry) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.hdr
		must(t, tw.WriteHeader(&h))
		_, err := tw.Write([]byte(e.body))
		must(t, err)
	}
	must(t, tw.Close())
	return &buf
}
