package crictlconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// crictl's config --set keeps the file's keys and comments in place and
// appends the keys it lacks in crictl's order (crictl 1.37 writes the same
// for this file, but refuses its tls-ca key, crisp's own).
func TestSetKeepsCommentsAndWritesCrictlsOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crictl.yaml")
	if err := os.WriteFile(path, []byte("runtime-endpoint: unix:///x.sock\ntimeout: 10\n# comment\ntls-ca: /ca.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetPairs([]string{"max-retries=2,timeout=5", "debug=true"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "runtime-endpoint: unix:///x.sock\ntimeout: 5\n# comment\ntls-ca: /ca.pem\nimage-endpoint: \"\"\ndebug: true\npull-image-on-create: false\ndisable-pull-on-run: false\nmax-retries: 2\n"
	if string(got) != want {
		t.Errorf("file after --set:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{"nosuch=1", "timeout=soon", "debug=maybe", "timeout"} {
		if err := f.SetPairs([]string{bad}); err == nil {
			t.Errorf("--set %s: no error", bad)
		}
	}
}
