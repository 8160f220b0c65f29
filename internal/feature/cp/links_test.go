package cp

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The links of a hostile tree: those that would lead out of the copy on
// the node (absolute, climbing with .., or through another link of the
// copy) and those that stay inside it.
var (
	linksOut = map[string]string{
		"d/abs":       "/etc/shadow",
		"d/up":        "../../../../../etc",
		"d/sub/up2":   "../../x",
		"d/chain":     "sub/dot/..", // sub/dot -> .. is d itself: d/.. is out
		"d/sub/deep":  "../chain/x", // through a link that leads out
		"d/sub/loop1": "loop2",      // a loop leads nowhere safe
		"d/sub/loop2": "loop1",
	}
	linksIn = map[string]string{
		"d/in":      "sub/f",
		"d/sub/dot": "..",
		"d/sub/rel": "../in",
		"d/sub/own": "./f",
		"d/dangle":  "sub/not-yet",
	}
)

// Symlinks that point outside the destination are skipped with a warning
// naming them, as kubectl cp does; links inside the copy are kept. Both
// ways: the container's tar, and the container's root packed from the node.
func TestCopyOutSkipsLinksLeadingOut(t *testing.T) {
	check := func(t *testing.T, out, warnings string) {
		t.Helper()
		for name, target := range linksIn {
			if got, err := os.Readlink(filepath.Join(out, name)); err != nil || got != target {
				t.Errorf("%s: %q, %v; want the link to %q kept", name, got, err, target)
			}
		}
		for name := range linksOut {
			if got, err := os.Readlink(filepath.Join(out, name)); err == nil {
				t.Errorf("%s -> %q landed on the node", name, got)
			}
			if !strings.Contains(warnings, "skipping "+name+": ") && !strings.Contains(warnings, "skipping /"+name+": ") {
				t.Errorf("no warning names %s: %q", name, warnings)
			}
		}
	}
	t.Run("tar", func(t *testing.T) {
		out := t.TempDir()
		var stderr strings.Builder
		copyOut(t, out, "d", &stderr, func(w io.Writer) error {
			tw := tar.NewWriter(w)
			hdrs := []tar.Header{{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "d/sub/", Typeflag: tar.TypeDir, Mode: 0o755}}
			for _, m := range []map[string]string{linksOut, linksIn} {
				for _, name := range sortedKeys(m) {
					hdrs = append(hdrs, tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: m[name], Mode: 0o777})
				}
			}
			hdrs = append(hdrs, tar.Header{Name: "d/sub/f", Typeflag: tar.TypeReg, Mode: 0o644},
				// A hard link to a link outside is the same link.
				tar.Header{Name: "d/hard", Typeflag: tar.TypeLink, Linkname: "d/abs"})
			for _, h := range hdrs {
				if err := tw.WriteHeader(&h); err != nil {
					return err
				}
			}
			return tw.Close()
		})
		check(t, out, stderr.String())
		if _, err := os.Lstat(filepath.Join(out, "d", "hard")); err == nil {
			t.Error("d/hard, a hard link to d/abs -> /etc/shadow, landed")
		}
	})
	t.Run("root", func(t *testing.T) {
		root := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(root, "d", "sub"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "d", "sub", "f"), nil, 0o644))
		for _, m := range []map[string]string{linksOut, linksIn} {
			for name, target := range m {
				must(t, os.Symlink(target, filepath.Join(root, name)))
			}
		}
		d, err := OpenInRoot(root, "container ctr")
		must(t, err)
		defer func() { _ = d.Close() }()
		out := t.TempDir()
		var stderr strings.Builder
		copyOut(t, out, "d", &stderr, func(w io.Writer) error { return packTo(d, "d", "d", w, func(string) {}) })
		check(t, out, stderr.String())
	})
}

// A copy of one symlink lands in a directory of the node: it is kept when
// its target names something in that directory, skipped when it leads out.
func TestCopyOutOfOneSymlink(t *testing.T) {
	for target, kept := range map[string]bool{"busybox": true, "./sh.real": true, "../../etc/shadow": false, "/etc/shadow": false, "..": false} {
		out := t.TempDir()
		var stderr strings.Builder
		copyOut(t, out, "sh", &stderr, func(w io.Writer) error {
			tw := tar.NewWriter(w)
			if err := tw.WriteHeader(&tar.Header{Name: "sh", Typeflag: tar.TypeSymlink, Linkname: target}); err != nil {
				return err
			}
			return tw.Close()
		})
		got, err := os.Readlink(filepath.Join(out, "sh"))
		if kept && (err != nil || got != target) {
			t.Errorf("sh -> %s: %q, %v; want it kept", target, got, err)
		}
		if !kept && (err == nil || !strings.Contains(stderr.String(), "skipping sh: ")) {
			t.Errorf("sh -> %s landed (%q) or no warning (%q)", target, got, stderr.String())
		}
	}
}

// copyOut unpacks what produce writes into out/final as a copy out does,
// its warnings to stderr.
func copyOut(t *testing.T, out, final string, stderr io.Writer, produce func(io.Writer) error) {
	t.Helper()
	ld, err := OpenBeneath(out)
	must(t, err)
	defer func() { _ = ld.Close() }()
	must(t, testJob(stderr).unpackInto(context.Background(), ld, "", final, noCount{}, produce))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
