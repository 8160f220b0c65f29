package mockruntime

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultImage is the image the mock holds from the start: busybox-like, so
// it runs `sh` and busybox applets. It is critest's default test image, so
// critest finds it without pulling.
const DefaultImage = "registry.k8s.io/e2e-test-images/busybox:1.29-2"

// PrivateImage is a busybox-like catalog image whose pull needs credentials
// (PrivateImageUser, PrivateImagePassword), given as crictl gives them:
// username and password (crictl pull --creds USER:PASS) or the base64 of
// "USER:PASS" (crictl pull --auth). A pull without them, or with others,
// fails as a registry's refusal does on containerd.
const (
	PrivateImage         = "registry.crisp.test/private/busybox:1.0"
	PrivateImageUser     = "crisp"
	PrivateImagePassword = "crisp-secret"
)

// Web-server ports: critest's nginx image serves on 80, its host-network
// image (hostnet-nginx-ARCH) on 12003.
const (
	webServerPort        = 80
	hostNetWebServerPort = 12003
)

// imageKind is what an image runs when the container gives no command.
type imageKind int

const (
	// imageOther has no default command: containers must name one.
	imageOther imageKind = iota
	// imageBusybox runs sh with busybox applets first in PATH.
	imageBusybox
	// imageWebServer runs the mock's built-in static HTTP server.
	imageWebServer
	// imagePause waits for a signal, as the pause image does (and as the
	// cri-tools test images, which only need to run, are made to).
	imagePause
)

// classifyImage tells what a (normalized) image name runs, and on which port
// a web server listens.
func classifyImage(name string) (imageKind, int) {
	repo := strings.ToLower(name)
	switch {
	case strings.Contains(repo, "hostnet-nginx"):
		return imageWebServer, hostNetWebServerPort
	case strings.Contains(repo, "nginx"), strings.Contains(repo, "httpd"):
		return imageWebServer, webServerPort
	case strings.Contains(repo, "busybox"):
		return imageBusybox, 0
	case strings.Contains(repo, "/pause:"), strings.Contains(repo, "/pause@"),
		strings.Contains(repo, "k8s-staging-cri-tools/test-image"):
		return imagePause, 0
	}
	return imageOther, 0
}

// catalogImage is what the mock knows of an image before it is pulled:
// which content it is (names with the same content are one image, with one
// ID, as tags of one manifest are), the user its config names, its size and
// the credentials its registry asks for.
type catalogImage struct {
	content string
	user    string
	size    uint64
	creds   *credentials
}

// sharedContent maps names (normalized) to a content key they share.
var sharedContent = map[string]string{
	// critest: one image under three tags, and one image in two registries.
	"gcr.io/k8s-staging-cri-tools/test-image-tags:1": "cri-tools/test-image-tags",
	"gcr.io/k8s-staging-cri-tools/test-image-tags:2": "cri-tools/test-image-tags",
	"gcr.io/k8s-staging-cri-tools/test-image-tags:3": "cri-tools/test-image-tags",
	"registry.k8s.io/pause:3.9":                      "pause:3.9",
	"k8s.gcr.io/pause:3.9":                           "pause:3.9",
}

// imageUsers are the users that image configs name (critest's user images).
var imageUsers = map[string]string{
	"gcr.io/k8s-staging-cri-tools/test-image-user-uid":            "1002",
	"gcr.io/k8s-staging-cri-tools/test-image-user-username":       "www-data",
	"gcr.io/k8s-staging-cri-tools/test-image-user-uid-group":      "1003:users",
	"gcr.io/k8s-staging-cri-tools/test-image-user-username-group": "www-data:www-data",
	"gcr.io/k8s-staging-cri-tools/test-image-predefined-group":    "1000",
}

// defaultImageSize is the size of an image the catalog has no figure for.
const defaultImageSize = 4 << 20

// lookupCatalog describes the image a normalized name refers to. A name
// the catalog does not list is an image of its own.
func lookupCatalog(name string) catalogImage {
	img := catalogImage{content: name, size: defaultImageSize}
	if c, ok := sharedContent[name]; ok {
		img.content = c
	}
	repo := repoOf(name)
	img.user = imageUsers[repo]
	if repo == repoOf(PrivateImage) {
		img.creds = &credentials{user: PrivateImageUser, password: PrivateImagePassword}
	}
	if k, _ := classifyImage(name); k == imagePause {
		img.size = 300 << 10
	}
	return img
}

// repoOf strips the tag or digest of a normalized name.
func repoOf(name string) string {
	if i := strings.Index(name, "@"); i >= 0 {
		return name[:i]
	}
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i:], "/") {
		return name[:i]
	}
	return name
}

// credentials a registry asks for.
type credentials struct{ user, password string }

// allows reports whether auth carries the credentials, as username and
// password or as base64("user:password") in auth.
func (c *credentials) allows(auth *runtimeapi.AuthConfig) bool {
	user, password := auth.GetUsername(), auth.GetPassword()
	if a := auth.GetAuth(); a != "" {
		b, err := base64.StdEncoding.DecodeString(a)
		if err != nil {
			return false
		}
		user, password, _ = strings.Cut(string(b), ":")
	}
	return user == c.user && password == c.password
}

// normalizeImage turns a reference into the canonical form runtimes report:
// docker.io/library/busybox:latest for busybox. IDs (sha256:...) pass as
// they are.
func normalizeImage(ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	first, _, hasSlash := strings.Cut(name, "/")
	if !hasSlash || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		if !hasSlash {
			name = "library/" + name
		}
		name = "docker.io/" + name
	}
	if hasDigest {
		// A tag beside the digest says nothing more: the digest rules.
		return repoOf(name) + "@" + digest
	}
	if i := strings.LastIndex(name, ":"); i < 0 || strings.Contains(name[i:], "/") {
		name += ":latest"
	}
	return name
}

// digestOf derives a stable sha256 digest from key: the mock has no layers
// or manifests to hash.
func digestOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}
