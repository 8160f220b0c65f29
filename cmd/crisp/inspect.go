package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// inspectOptions are the flags of `crisp inspect`.
type inspectOptions struct {
	f   *factory
	now func() time.Time

	Refs []string
	// Output is -o, defaulting to json for inspect unless given.
	Output string
}

func newInspectCommand(f *factory) *cobra.Command {
	o := &inspectOptions{f: f, now: time.Now}
	cmd := &cobra.Command{
		Use:   "inspect CONTAINER...",
		Short: "Show the full status of containers",
		Long: `Show what the runtime knows of one or more containers: its ContainerStatus with
the runtime's verbose info (pid, spec, ...), as JSON by default, YAML with
-o yaml, or a short summary with -o table. Each CONTAINER is a full ID, a
unique ID prefix or a unique name (a name shared with exited attempts means
the running container); several give a JSON array.

EXIT STATUS
  0  every container was found and shown
  1  a container matched nothing or several (the candidates are listed), or the
     runtime could not be reached or failed
  2  bad flags or arguments`,
		Example: `  crisp inspect nginx
  crisp inspect 3f2a -o yaml
  crisp inspect -o table web sidecar`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("%s needs at least one CONTAINER (ID, ID prefix or name)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(cmd, args)
			return o.Run(cmd.Context())
		},
	}
	return cmd
}

// Complete takes the references and picks the output format: json unless
// -o was given.
func (o *inspectOptions) Complete(cmd *cobra.Command, args []string) {
	o.Refs = args
	o.Output = inspectOutput(cmd, o.f.Global.Output)
}

// inspectOutput is -o when the user gave it, else json (inspect is data).
func inspectOutput(cmd *cobra.Command, global string) string {
	if fl := cmd.Flags().Lookup("output"); fl != nil && fl.Changed {
		return global
	}
	return "json"
}

// inspected is one object of inspect's output, crictl's shape: the status
// as CRI spells it and the runtime's verbose info, decoded where it is JSON.
type inspected struct {
	Status json.RawMessage `json:"status"`
	Info   map[string]any  `json:"info,omitempty"`
}

func newInspected(status json.RawMessage, info map[string]string) inspected {
	out := inspected{Status: status}
	if len(info) > 0 {
		out.Info = make(map[string]any, len(info))
		for k, v := range info {
			var decoded any
			if json.Unmarshal([]byte(v), &decoded) == nil {
				out.Info[k] = decoded
			} else {
				out.Info[k] = v
			}
		}
	}
	return out
}

// oneOrMany prints a single object as itself and several as an array.
func oneOrMany(items []inspected) any {
	if len(items) == 1 {
		return items[0]
	}
	return items
}

// Run resolves every container, then prints them.
func (o *inspectOptions) Run(ctx context.Context) error {
	return inspectEach(ctx, o.f, o.now, o.Refs, o.Output, containerStatus, containerSummary)
}

// inspectEach is what inspect and inspectp share: it resolves and fetches
// every reference in turn (with the verbose info unless the output is a
// table), then prints them as inspected objects, or with -o table each
// through summary, a blank line between them.
func inspectEach[S proto.Message](ctx context.Context, f *factory, now func() time.Time, refs []string, output string,
	fetch func(ctx context.Context, c *client.Client, ref string, verbose bool) (S, map[string]string, error),
	summary func(w io.Writer, now time.Time, st S)) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	verbose := output != "table"
	var (
		items    []inspected
		statuses []S
	)
	for _, ref := range refs {
		st, info, err := fetch(ctx, c, ref, verbose)
		if err != nil {
			return err
		}
		data, err := protoData(st)
		if err != nil {
			return err
		}
		items = append(items, newInspected(data, info))
		statuses = append(statuses, st)
	}
	at := now()
	return printData(f.Streams.Out, output, oneOrMany(items), func(w io.Writer) error {
		for i, st := range statuses {
			if i > 0 {
				row(w)
			}
			summary(w, at, st)
		}
		return nil
	})
}

// containerStatus resolves a container reference and fetches its status.
func containerStatus(ctx context.Context, c *client.Client, ref string, verbose bool) (*runtimeapi.ContainerStatus, map[string]string, error) {
	ctr, err := c.ResolveContainer(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.ContainerStatus(ctx, ctr.GetId(), verbose)
	if err != nil {
		return nil, nil, err
	}
	return resp.GetStatus(), resp.GetInfo(), nil
}

// containerSummary is one container in inspect -o table.
func containerSummary(w io.Writer, now time.Time, st *runtimeapi.ContainerStatus) {
	md := st.GetMetadata()
	row(w, "ID:", st.GetId())
	row(w, "Name:", md.GetName())
	row(w, "Attempt:", md.GetAttempt())
	row(w, "State:", client.ContainerStateName(st.GetState()))
	row(w, "Created:", timestamp(now, st.GetCreatedAt()))
	if st.GetStartedAt() != 0 {
		row(w, "Started:", timestamp(now, st.GetStartedAt()))
	}
	if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		row(w, "Finished:", timestamp(now, st.GetFinishedAt()))
		row(w, "Exit code:", st.GetExitCode())
		if st.GetReason() != "" {
			row(w, "Reason:", st.GetReason())
		}
	}
	row(w, "Image:", st.GetImage().GetImage())
	row(w, "Image ref:", st.GetImageRef())
	if labels := formatLabels(st.GetLabels()); labels != "" {
		row(w, "Labels:", labels)
	}
}

// timestamp writes a CRI timestamp (Unix nanoseconds) in UTC with its age.
func timestamp(now time.Time, unixNano int64) string {
	if unixNano == 0 {
		return "Unknown"
	}
	return fmt.Sprintf("%s (%s)", time.Unix(0, unixNano).UTC().Format(time.RFC3339), createdAgo(now, unixNano))
}

// formatLabels writes labels as sorted k=v pairs.
func formatLabels(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}
