package mockruntime

import (
	"context"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ListImages lists the images the runtime has, filtered by image name or ID.
func (s *imageService) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	imgs := s.r.images.list()
	if want := req.GetFilter().GetImage().GetImage(); want != "" {
		imgs = nil
		if img := s.r.images.find(want); img != nil {
			imgs = []*runtimeapi.Image{img}
		}
	}
	return &runtimeapi.ListImagesResponse{Images: imgs}, nil
}

// ImageStatus reports an image, or no image (not an error) when the runtime
// does not have it, as the CRI asks. Verbose adds the image's config.
func (s *imageService) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, invalidf("image status needs an image name or ID")
	}
	img := s.r.images.find(ref)
	resp := &runtimeapi.ImageStatusResponse{Image: img}
	if img != nil && req.GetVerbose() {
		cat := lookupCatalog(img.Spec.GetImage())
		kind, port := classifyImage(img.Spec.GetImage())
		cfg := map[string]any{"User": cat.user, "Env": []string{"PATH=" + s.r.procEnv.pathFor(kind)}}
		switch kind {
		case imageBusybox:
			cfg["Cmd"] = []string{"sh"}
		case imageWebServer:
			cfg["ExposedPorts"] = map[string]any{strconv.Itoa(port) + "/tcp": struct{}{}}
		case imagePause:
			cfg["Entrypoint"] = []string{"/pause"}
		}
		resp.Info = map[string]string{"info": jsonString(map[string]any{
			"imageSpec": map[string]any{"architecture": "amd64", "os": "linux", "config": cfg},
			"chainID":   digestOf(cat.content + "/layers"),
			"runtime":   RuntimeName,
		})}
	}
	return resp, nil
}

// pullTime is how long a pull takes: a pull is a registry round trip on a
// real runtime, and a client's deadline shorter than that must fail it.
const pullTime = 20 * time.Millisecond

// PullImage records the image: the mock runs programs of the host, so there
// is nothing to download. Catalog images may ask for credentials.
func (s *imageService) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, invalidf("pull needs an image name")
	}
	if strings.ContainsAny(ref, " \t\n") {
		return nil, invalidf("image name %q contains white space", ref)
	}
	timer := time.NewTimer(pullTime)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	case <-timer.C:
	}
	name := normalizeImage(ref)
	if c := lookupCatalog(name).creds; c != nil && !c.allows(req.GetAuth()) {
		return nil, status.Errorf(codes.Unknown, "failed to pull and unpack image %q: failed to resolve reference %q: pull access denied, repository does not exist or may require authorization: authorization failed: 401 Unauthorized (give the registry's credentials)", name, name)
	}
	img := s.r.images.add(ref)
	return &runtimeapi.PullImageResponse{ImageRef: img.Id}, nil
}

// RemoveImage removes an image with all its names. Removing an image the
// runtime does not have succeeds, as the CRI asks (removal is idempotent).
func (s *imageService) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, invalidf("remove needs an image name or ID")
	}
	s.r.images.remove(ref)
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports the runtime's temporary folder as its image store,
// with the catalog sizes of the images it has.
func (s *imageService) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	used, inodes := s.r.images.usage()
	now := time.Now().UnixNano()
	usage := &runtimeapi.FilesystemUsage{
		Timestamp:  now,
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: s.r.tmpDir},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: inodes},
	}
	// The writable layers of containers live beside the images.
	containers := &runtimeapi.FilesystemUsage{
		Timestamp:  now,
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: s.r.tmpDir},
		UsedBytes:  &runtimeapi.UInt64Value{Value: s.r.writableLayerBytes()},
		InodesUsed: &runtimeapi.UInt64Value{Value: 0},
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{usage}, ContainerFilesystems: []*runtimeapi.FilesystemUsage{containers}}, nil
}
