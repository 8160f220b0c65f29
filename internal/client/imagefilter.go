package client

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// FilterImages applies crictl's images -f/--filter conditions to images, in
// order, with crictl's meanings: dangling=true|false (untagged or tagged),
// reference=REGEX (matched against the repository of the image's first
// digest), before=REF and since=REF (the images listed before or after the
// one REF names: name:tag, an ID prefix, or name@digest).
func FilterImages(images []*runtimeapi.Image, filters []string) ([]*runtimeapi.Image, error) {
	out := slices.Clone(images)
	for _, f := range filters {
		key, value, _ := strings.Cut(f, "=")
		switch key {
		case "before":
			slices.Reverse(out)
			out = untilImage(out, value)
			slices.Reverse(out)
		case "since":
			out = untilImage(out, value)
		case "dangling":
			if value != "true" && value != "false" {
				return nil, fmt.Errorf("filter %q: dangling is true or false", f)
			}
			out = slices.DeleteFunc(out, func(img *runtimeapi.Image) bool { return (len(img.GetRepoTags()) == 0) != (value == "true") })
		case "reference":
			re, err := regexp.Compile(value)
			if err != nil {
				return nil, fmt.Errorf("filter %q: %w", f, err)
			}
			out = slices.DeleteFunc(out, func(img *runtimeapi.Image) bool {
				name := digestRepo(img)
				return !re.MatchString(name) && name != value
			})
		default:
			return nil, fmt.Errorf("unknown filter %q: want dangling=, reference=, before= or since=", f)
		}
	}
	return out, nil
}

// untilImage is the images of list up to (not including) the one ref
// names, as crictl's before/since see them.
func untilImage(list []*runtimeapi.Image, ref string) []*runtimeapi.Image {
	var out []*runtimeapi.Image
	for _, img := range list {
		switch {
		case strings.Contains(ref, "@"):
			digests := img.GetRepoDigests()
			if !strings.Contains(ref, ":") || len(digests) == 0 {
				continue // crictl keeps no image without a digest here
			}
			if strings.HasPrefix(digests[0], ref) {
				return out
			}
		case strings.Contains(ref, ":"):
			tag := digestRepo(img) + ":<none>"
			if tags := img.GetRepoTags(); len(tags) > 0 {
				tag = tags[0]
			}
			if tag == ref {
				return out
			}
		case strings.HasPrefix(img.GetId(), ref):
			return out
		}
		out = append(out, img)
	}
	return out
}

// digestRepo is the repository of the image's first digest, "<none>"
// without one (crictl's image name for filters).
func digestRepo(img *runtimeapi.Image) string {
	if d := img.GetRepoDigests(); len(d) > 0 {
		if repo, _, ok := strings.Cut(d[0], "@"); ok {
			return repo
		}
	}
	return "<none>"
}
