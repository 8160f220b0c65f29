package query

import (
	"context"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// inspector fetches one object's status: its crictl JSON, the runtime's
// verbose info, and a summary writer for -o table.
type inspector func(ctx context.Context, c *client.Client, ref string, verbose bool) (status map[string]any, info map[string]string, summary func(io.Writer, time.Time), err error)

// inspectEach resolves and fetches every reference in turn, then prints
// them as crictl does (one object, or an array of several), or with -o
// table each summary, a blank line between them. quiet leaves the runtime's
// verbose info out.
func inspectEach(ctx context.Context, c *client.Client, refs []string, quiet bool, now time.Time, p output.Printer, fetch inspector) error {
	verbose := !quiet && p.Format != output.Table
	var (
		items     []output.Status
		summaries []func(io.Writer, time.Time)
	)
	for _, ref := range refs {
		status, info, summary, err := fetch(ctx, c, ref, verbose)
		if err != nil {
			return err
		}
		st, err := output.NewStatus(status, info)
		if err != nil {
			return err
		}
		items = append(items, st)
		summaries = append(summaries, summary)
	}
	return p.Print(output.OneOrMany(items), func(w io.Writer) error {
		for i, s := range summaries {
			if i > 0 {
				output.Row(w)
			}
			s(w, now)
		}
		return nil
	})
}

// Inspect prints containers' statuses (crisp inspect).
func Inspect(ctx context.Context, c *client.Client, refs []string, quiet bool, now time.Time, p output.Printer) error {
	return inspectEach(ctx, c, refs, quiet, now, p, func(ctx context.Context, c *client.Client, ref string, verbose bool) (map[string]any, map[string]string, func(io.Writer, time.Time), error) {
		ctr, err := c.ResolveContainer(ctx, ref)
		if err != nil {
			return nil, nil, nil, err
		}
		resp, err := c.ContainerStatus(ctx, ctr.GetId(), verbose)
		if err != nil {
			return nil, nil, nil, err
		}
		status, err := output.ContainerStatusJSON(resp.GetStatus())
		return status, resp.GetInfo(), func(w io.Writer, now time.Time) { output.ContainerSummary(w, now, resp.GetStatus()) }, err
	})
}

// InspectPod prints pod sandboxes' statuses (crisp inspectp).
func InspectPod(ctx context.Context, c *client.Client, refs []string, quiet bool, now time.Time, p output.Printer) error {
	return inspectEach(ctx, c, refs, quiet, now, p, func(ctx context.Context, c *client.Client, ref string, verbose bool) (map[string]any, map[string]string, func(io.Writer, time.Time), error) {
		pod, err := c.ResolvePod(ctx, ref)
		if err != nil {
			return nil, nil, nil, err
		}
		resp, err := c.PodStatus(ctx, pod.GetId(), verbose)
		if err != nil {
			return nil, nil, nil, err
		}
		status, err := output.PodStatusJSON(resp.GetStatus())
		return status, resp.GetInfo(), func(w io.Writer, now time.Time) { output.PodSummary(w, now, resp.GetStatus()) }, err
	})
}

// InspectImage prints images' statuses (crisp inspecti).
func InspectImage(ctx context.Context, c *client.Client, refs []string, quiet bool, now time.Time, p output.Printer) error {
	return inspectEach(ctx, c, refs, quiet, now, p, func(ctx context.Context, c *client.Client, ref string, verbose bool) (map[string]any, map[string]string, func(io.Writer, time.Time), error) {
		resp, err := c.InspectImage(ctx, ref, verbose)
		if err != nil {
			return nil, nil, nil, err
		}
		status, err := output.ImageStatusJSON(resp.GetImage())
		return status, resp.GetInfo(), func(w io.Writer, now time.Time) { output.ImageSummary(w, now, resp.GetImage()) }, err
	})
}

// Info prints the runtime's status, handlers, features and verbose info
// (crisp info).
func Info(ctx context.Context, c *client.Client, quiet bool, p output.Printer) error {
	var resp *runtimeapi.StatusResponse
	err := c.Call(ctx, "status", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.Status(ctx, &runtimeapi.StatusRequest{Verbose: !quiet && p.Format != output.Table})
		return err
	})
	if err != nil {
		return err
	}
	st, err := output.RuntimeStatus(resp)
	if err != nil {
		return err
	}
	return p.Print(st, func(w io.Writer) error {
		output.Row(w, "ENDPOINT", c.Endpoint)
		output.Row(w)
		output.Row(w, "CONDITION", "STATUS", "REASON", "MESSAGE")
		for _, cond := range resp.GetStatus().GetConditions() {
			output.Row(w, cond.GetType(), cond.GetStatus(), cond.GetReason(), cond.GetMessage())
		}
		for _, h := range resp.GetRuntimeHandlers() {
			output.Row(w, "HANDLER", handlerName(h.GetName()), "recursive-read-only-mounts="+yesNo(h.GetFeatures().GetRecursiveReadOnlyMounts()),
				"user-namespaces="+yesNo(h.GetFeatures().GetUserNamespaces()))
		}
		return nil
	})
}

func handlerName(n string) string {
	if n == "" {
		return "(default)"
	}
	return n
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// VersionReport is crisp version's data: crictl's four fields (the
// VersionResponse's JSON names) and crisp's own version and endpoint.
type VersionReport struct {
	ClientVersion     string `json:"clientVersion"`
	Endpoint          string `json:"endpoint"`
	Version           string `json:"version"`
	RuntimeName       string `json:"runtimeName"`
	RuntimeVersion    string `json:"runtimeVersion"`
	RuntimeAPIVersion string `json:"runtimeApiVersion"`
}

// Version prints crisp's and the runtime's versions (crisp version).
func Version(ctx context.Context, c *client.Client, clientVersion string, p output.Printer) error {
	var resp *runtimeapi.VersionResponse
	err := c.Call(ctx, "version", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
		return err
	})
	if err != nil {
		return err
	}
	r := VersionReport{
		ClientVersion: clientVersion, Endpoint: c.Endpoint, Version: resp.GetVersion(),
		RuntimeName: resp.GetRuntimeName(), RuntimeVersion: resp.GetRuntimeVersion(), RuntimeAPIVersion: resp.GetRuntimeApiVersion(),
	}
	return p.Print(r, func(w io.Writer) error {
		output.Row(w, "Client:", "crisp "+r.ClientVersion)
		output.Row(w, "Endpoint:", r.Endpoint)
		output.Row(w, "Version:", r.Version)
		output.Row(w, "RuntimeName:", r.RuntimeName)
		output.Row(w, "RuntimeVersion:", r.RuntimeVersion)
		output.Row(w, "RuntimeApiVersion:", r.RuntimeAPIVersion)
		return nil
	})
}
