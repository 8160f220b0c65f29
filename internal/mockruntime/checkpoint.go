package mockruntime

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// checkpointNote explains, inside every archive, what it lacks.
const checkpointNote = `This checkpoint archive was written by crisp's mock runtime. Its containers are
host processes without CRIU, so it holds the container's configuration, process
spec, status and log, but no memory image: it cannot be restored.
`

// CheckpointContainer writes an archive of a running container at the
// requested location (a tar file, as containerd and CRI-O write with
// crictl checkpoint --export), named and laid out as theirs are
// (config.dump, spec.dump, status.dump, container.log). It holds no process
// memory image (the mock has no CRIU), which a note in the archive says.
func (s *runtimeService) CheckpointContainer(ctx context.Context, req *runtimeapi.CheckpointContainerRequest) (*runtimeapi.CheckpointContainerResponse, error) {
	c, err := s.r.runningContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	loc := req.GetLocation()
	if loc == "" || !filepath.IsAbs(loc) {
		return nil, invalidf("checkpoint location %q must be an absolute path (crictl checkpoint --export=/PATH/NAME.tar)", loc)
	}
	if t := req.GetTimeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t)*time.Second)
		defer cancel()
	}
	c.mu.Lock()
	pid := c.pid
	c.mu.Unlock()
	spec := map[string]any{"process": map[string]any{"args": c.spec.argv, "env": c.spec.env, "cwd": c.spec.dir, "terminal": c.spec.tty}, "pid": pid}
	files := []struct {
		name string
		v    any
	}{
		{"config.dump", map[string]any{"id": c.id, "name": c.config.GetMetadata().GetName(), "rootfsImageName": c.imageName, "rootfsImageRef": c.image.Id, "createdTime": time.Unix(0, c.createdAt).UTC(), "checkpointedTime": time.Now().UTC(), "runtime": RuntimeName}},
		{"spec.dump", spec},
		{"status.dump", c.status()},
	}
	if err := writeCheckpoint(ctx, loc, c.logPath, files); err != nil {
		return nil, status.Errorf(codes.Internal, "checkpoint container %s to %s: %v", c.id, loc, err)
	}
	return &runtimeapi.CheckpointContainerResponse{}, nil
}

func writeCheckpoint(ctx context.Context, loc, logPath string, files []struct {
	name string
	v    any
},
) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(loc), ".checkpoint-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	tw := tar.NewWriter(tmp)
	now := time.Now()
	add := func(name string, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add("README", []byte(checkpointNote)); err != nil {
		return err
	}
	for _, f := range files {
		b, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return fmt.Errorf("encode %s: %w", f.name, err)
		}
		if err := add(f.name, b); err != nil {
			return err
		}
	}
	if logPath != "" {
		if b, err := os.ReadFile(logPath); err == nil {
			if err := add("container.log", b); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), loc)
}
