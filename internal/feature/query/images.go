package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// Pull pulls ref and prints "Image is up to date for REF" as crictl does.
func Pull(ctx context.Context, c *client.Client, ref string, o client.PullOptions, out io.Writer) error {
	got, err := c.Pull(ctx, ref, o)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Image is up to date for %s\n", termsafe.Printable(got))
	return err
}

// RMIOptions are crisp rmi's flags.
type RMIOptions struct {
	// All removes every image; Prune every image no container uses.
	All, Prune bool
	// Warn, when set, receives crictl's warning that a tag's image
	// carries other tags, which go with it.
	Warn io.Writer
}

// RMI removes images and prints "Deleted: TAG" for each, as crictl rmi.
func RMI(ctx context.Context, c *client.Client, refs []string, o RMIOptions, out io.Writer) error {
	var images []*runtimeapi.Image
	var err error
	switch {
	case o.All:
		images, err = c.ListImages(ctx, "")
	case o.Prune:
		images, err = c.UnusedImages(ctx)
	}
	if err != nil {
		return err
	}
	for _, img := range images {
		refs = append(refs, img.GetId())
	}
	var werr error
	var shared func(string, []string)
	if o.Warn != nil {
		shared = func(ref string, tags []string) {
			_, _ = fmt.Fprintf(o.Warn, "crisp: image %q has %d tags; removing it removes them all:\n", ref, len(tags)) // a warning: best effort
			for _, t := range tags {
				_, _ = fmt.Fprintf(o.Warn, "  %s\n", termsafe.Printable(t)) // a warning: best effort
			}
		}
	}
	err = c.RemoveImages(ctx, refs, shared, func(deleted string) {
		if _, err := fmt.Fprintf(out, "Deleted: %s\n", termsafe.Printable(deleted)); err != nil {
			werr = err
		}
	})
	return errors.Join(err, werr)
}

// ImageFsInfo prints the image filesystems (crisp imagefsinfo), as crictl:
// {"status": ImageFsInfoResponse}; the table is crisp's.
func ImageFsInfo(ctx context.Context, c *client.Client, p output.Printer) error {
	resp, err := c.ImageFsInfo(ctx)
	if err != nil {
		return err
	}
	data, err := output.ProtoJSON(resp)
	if err != nil {
		return err
	}
	// crictl's keys are sorted here: decoded into maps, encoded again.
	var sorted any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&sorted); err != nil {
		return err
	}
	return p.Print(map[string]any{"status": sorted}, func(w io.Writer) error {
		output.FsTable(w, resp)
		return nil
	})
}

// RuntimeConfig prints the runtime's configuration as crictl does
// ("cgroup driver:   SYSTEMD"), or its JSON.
func RuntimeConfig(ctx context.Context, c *client.Client, p output.Printer) error {
	resp, err := c.RuntimeConfig(ctx)
	if err != nil {
		return err
	}
	return p.PrintProto(resp, func(w io.Writer) error {
		output.Row(w, "cgroup driver:", resp.GetLinux().GetCgroupDriver().String())
		return nil
	})
}

// Events prints each container event as it comes (crisp events), as JSON by
// default like crictl, until ctx ends.
func Events(ctx context.Context, c *client.Client, p output.Printer) error {
	return c.Events(ctx, func(ev *runtimeapi.ContainerEventResponse) error {
		return p.PrintProto(ev, func(w io.Writer) error {
			output.EventRow(w, ev)
			return nil
		})
	})
}
