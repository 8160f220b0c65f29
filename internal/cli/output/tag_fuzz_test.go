package output

import (
	"strings"
	"testing"
)

// FuzzSplitTag: an image reference splits into a repository and a tag that
// join back to it, and a registry's :port stays in the repository.
func FuzzSplitTag(f *testing.F) {
	for _, s := range []string{"nginx:1.27", "registry:5000/app", "registry:5000/app:v1", "busybox", ":", "a:b:c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		repo, tag := SplitTag(ref)
		if tag == "<none>" && repo == ref {
			return
		}
		if repo+":"+tag != ref {
			t.Fatalf("SplitTag(%q) = %q, %q: they do not join back", ref, repo, tag)
		}
		if strings.Contains(tag, "/") || strings.Contains(tag, ":") {
			t.Fatalf("SplitTag(%q) = tag %q with a path or a colon", ref, tag)
		}
	})
}
