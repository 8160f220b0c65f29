package mockruntime

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageStore records the images the runtime "has": the default image and
// every image pulled since. Names with the same content (see catalogImage)
// are tags of one image.
type imageStore struct {
	mu   sync.Mutex
	byID map[string]*runtimeapi.Image
	// refs maps every name (tag or digest reference, normalized) to the
	// ID of its image.
	refs map[string]string
}

func newImageStore() *imageStore {
	s := &imageStore{byID: map[string]*runtimeapi.Image{}, refs: map[string]string{}}
	s.add(DefaultImage)
	return s
}

// add records ref and returns (a copy of) its image.
func (s *imageStore) add(ref string) *runtimeapi.Image {
	name := normalizeImage(ref)
	cat := lookupCatalog(name)
	id := digestOf(cat.content)
	s.mu.Lock()
	defer s.mu.Unlock()
	img, ok := s.byID[id]
	if !ok {
		img = &runtimeapi.Image{Id: id, Size: cat.size, Spec: &runtimeapi.ImageSpec{Image: name}}
		user, _, _ := strings.Cut(cat.user, ":")
		if uid, err := strconv.ParseInt(user, 10, 64); err == nil {
			img.Uid = &runtimeapi.Int64Value{Value: uid}
		} else {
			img.Username = user
		}
		s.byID[id] = img
	}
	repo := repoOf(name)
	if strings.Contains(name, "@") {
		img.RepoDigests = appendNew(img.RepoDigests, name)
	} else {
		img.RepoTags = appendNew(img.RepoTags, name)
		// Pulling by tag also gives the manifest's digest reference, as
		// on a registry.
		digestRef := repo + "@" + digestOf(cat.content+"/manifest")
		img.RepoDigests = appendNew(img.RepoDigests, digestRef)
		s.refs[digestRef] = id
	}
	s.refs[name] = id
	return proto.Clone(img).(*runtimeapi.Image)
}

func appendNew(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// lookup finds ref by name, by ID or by unique ID prefix; the caller holds
// s.mu.
func (s *imageStore) lookup(ref string) *runtimeapi.Image {
	if id, ok := s.refs[normalizeImage(ref)]; ok {
		return s.byID[id]
	}
	if img, ok := s.byID[ref]; ok {
		return img
	}
	// An ID or a prefix of one (at least 4 hex digits), as crictl shows them.
	id := strings.TrimPrefix(ref, "sha256:")
	if len(id) < 4 || strings.Trim(id, "0123456789abcdef") != "" {
		return nil
	}
	var found *runtimeapi.Image
	for _, img := range s.byID {
		if strings.HasPrefix(strings.TrimPrefix(img.Id, "sha256:"), id) {
			if found != nil {
				return nil
			}
			found = img
		}
	}
	return found
}

// find returns (a copy of) the image ref names, or nil.
func (s *imageStore) find(ref string) *runtimeapi.Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	if img := s.lookup(ref); img != nil {
		return proto.Clone(img).(*runtimeapi.Image)
	}
	return nil
}

// remove forgets the image ref names, with all its tags and digests;
// false when there is no such image.
func (s *imageStore) remove(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := s.lookup(ref)
	if img == nil {
		return false
	}
	delete(s.byID, img.Id)
	for name, id := range s.refs {
		if id == img.Id {
			delete(s.refs, name)
		}
	}
	return true
}

// list returns copies of every image, by first name.
func (s *imageStore) list() []*runtimeapi.Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*runtimeapi.Image, 0, len(s.byID))
	for _, img := range s.byID {
		out = append(out, proto.Clone(img).(*runtimeapi.Image))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.GetImage() < out[j].Spec.GetImage() })
	return out
}

// usage is the images' total size and count (an inode figure).
func (s *imageStore) usage() (bytes, count uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, img := range s.byID {
		bytes += img.Size
		count++
	}
	return bytes, count
}
