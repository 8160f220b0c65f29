package client

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrEmptyUsername is returned by ParseCreds for ":password".
var ErrEmptyUsername = errors.New("the username before ':' is empty")

// ParseCreds splits crictl's --creds USERNAME[:PASSWORD]; the password is
// everything after the first colon and may itself hold colons.
func ParseCreds(creds string) (username, password string, err error) {
	if creds == "" {
		return "", "", errors.New("credentials are empty; want USERNAME[:PASSWORD]")
	}
	username, password, _ = strings.Cut(creds, ":")
	if username == "" {
		return "", "", ErrEmptyUsername
	}
	return username, password, nil
}

// PullOptions are crictl pull's flags.
type PullOptions struct {
	// Auth is nil for an anonymous pull.
	Auth *runtimeapi.AuthConfig
	// Annotations go on the image spec (--annotation k=v).
	Annotations map[string]string
	// PodConfig, when set, is the sandbox config the runtime may use to pick
	// a runtime handler or a platform (--pod-config).
	PodConfig *runtimeapi.PodSandboxConfig
	// Timeout bounds the pull (0: none; a pull may take minutes, so the
	// per-call --request-timeout does not apply).
	Timeout time.Duration
}

// Pull pulls ref (always, as crictl pull does) and returns the runtime's image reference.
func (c *Client) Pull(ctx context.Context, ref string, o PullOptions) (string, error) {
	req := &runtimeapi.PullImageRequest{
		Image:         &runtimeapi.ImageSpec{Image: ref, Annotations: o.Annotations},
		Auth:          o.Auth,
		SandboxConfig: o.PodConfig,
	}
	var resp *runtimeapi.PullImageResponse
	err := c.callImagesWithin(ctx, o.Timeout, "pulling "+ref, func(ctx context.Context) (err error) {
		resp, err = c.Images.PullImage(ctx, req)
		return err
	})
	if err != nil {
		return "", err
	}
	return resp.GetImageRef(), nil
}

// RemoveImage removes the image ref names (a name, tag or ID).
func (c *Client) RemoveImage(ctx context.Context, ref string) error {
	return c.CallImages(ctx, "removing image "+ref, func(ctx context.Context) error {
		_, err := c.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		return err
	})
}

// ImageFsInfo asks the image service about the filesystems it stores images
// and container layers on.
func (c *Client) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	var resp *runtimeapi.ImageFsInfoResponse
	err := c.CallImages(ctx, "image filesystem info", func(ctx context.Context) (err error) {
		resp, err = c.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
		return err
	})
	return resp, err
}

// UnusedImages are the images no container (in any state) was created
// from: what rmi --prune removes.
func (c *Client) UnusedImages(ctx context.Context) ([]*runtimeapi.Image, error) {
	images, err := c.ListImages(ctx, "")
	if err != nil {
		return nil, err
	}
	ctrs, err := c.ListContainers(ctx, ContainerFilter{All: true})
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, ctr := range ctrs {
		for _, s := range []string{ctr.GetImageRef(), ctr.GetImageId(), ctr.GetImage().GetImage(), ctr.GetImage().GetUserSpecifiedImage()} {
			used[s] = s != ""
		}
	}
	var out []*runtimeapi.Image
	for _, img := range images {
		inUse := used[img.GetId()]
		for _, t := range append(img.GetRepoTags(), img.GetRepoDigests()...) {
			inUse = inUse || used[t]
		}
		if !inUse {
			out = append(out, img)
		}
	}
	return out, nil
}

// MatchImage reports whether img is what a user named ref: an ID or ID
// prefix (with or without "sha256:"), a tag, a digest, or a name whose
// tag defaults to latest. Runtimes that ignore ListImages' filter are
// filtered with it.
func MatchImage(img *runtimeapi.Image, ref string) bool {
	if ref == "" {
		return true
	}
	id := img.GetId()
	if id == ref || strings.HasPrefix(strings.TrimPrefix(id, "sha256:"), strings.TrimPrefix(ref, "sha256:")) && len(strings.TrimPrefix(ref, "sha256:")) >= 3 && hexRE.MatchString(strings.TrimPrefix(ref, "sha256:")) {
		return true
	}
	for _, t := range img.GetRepoTags() {
		if t == ref || t == ref+":latest" || shortName(t) == ref || shortName(t) == ref+":latest" {
			return true
		}
		// A repository without a tag names every tag of it, as docker's and
		// crictl's images REPO list them.
		if repo := tagRepo(t); isBareRepo(ref) && (repo == ref || shortName(repo) == ref) {
			return true
		}
	}
	for _, d := range img.GetRepoDigests() {
		if d == ref || shortName(d) == ref {
			return true
		}
	}
	return false
}

var hexRE = regexp.MustCompile(`^[0-9a-f]+$`)

// tagRepo is a tag's repository: name:tag without :tag.
func tagRepo(tag string) string {
	if i := strings.LastIndex(tag, ":"); i > strings.LastIndex(tag, "/") {
		return tag[:i]
	}
	return tag
}

// isBareRepo says whether ref is a repository with neither tag nor digest.
func isBareRepo(ref string) bool {
	return !strings.Contains(ref, "@") && tagRepo(ref) == ref && !hexRE.MatchString(ref)
}

// shortName drops docker.io/library/ and docker.io/ as docker does.
func shortName(ref string) string {
	for _, p := range []string{"docker.io/library/", "docker.io/"} {
		if strings.HasPrefix(ref, p) {
			return strings.TrimPrefix(ref, p)
		}
	}
	return ref
}

// callImagesWithin is CallImages with its own timeout instead of the
// per-call one (0: none).
func (c *Client) callImagesWithin(ctx context.Context, timeout time.Duration, what string, call func(ctx context.Context) error) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := call(ctx); err != nil {
		return c.describe(c.imageEndpoint(), what, err)
	}
	return nil
}

// RemoveImages removes every image refs names, each by its ID, and calls
// deleted with each tag it carried (its ID when untagged), as crictl rmi
// prints them. Every ref is resolved first, so two tags of one image
// remove it once; shared, when set, is told of a tag whose image carries
// other tags too, before anything is removed (crictl warns so). It carries
// on past a failure; the error lists them all.
func (c *Client) RemoveImages(ctx context.Context, refs []string, shared func(ref string, tags []string), deleted func(string)) error {
	var errs []error
	var images []*runtimeapi.Image
	seen := map[string]bool{}
	for _, ref := range refs {
		st, err := c.InspectImage(ctx, ref, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		img := st.GetImage()
		byID := strings.HasPrefix(strings.TrimPrefix(img.GetId(), "sha256:"), strings.TrimPrefix(ref, "sha256:"))
		if shared != nil && len(img.GetRepoTags()) > 1 && !byID {
			shared(ref, img.GetRepoTags())
		}
		if !seen[img.GetId()] {
			seen[img.GetId()] = true
			images = append(images, img)
		}
	}
	for _, img := range images {
		if err := c.RemoveImage(ctx, img.GetId()); err != nil {
			errs = append(errs, err)
			continue
		}
		if len(img.GetRepoTags()) == 0 {
			deleted(img.GetId())
		}
		for _, t := range img.GetRepoTags() {
			deleted(t)
		}
	}
	return errors.Join(errs...)
}
