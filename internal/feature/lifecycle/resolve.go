// Package lifecycle is what crictl's lifecycle verbs do (runp, create,
// start, run, stop, rm, stopp, rmp, update, checkpoint, logs), over a
// runtime client: the commands in cmd/crisp only bind flags and call it.
// It prints IDs and notices to the writers it is given and never exits.
package lifecycle

import (
	"context"
	"fmt"
	"io"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/client"
)

// containerIDs resolves every reference, or lists every container (only
// the running ones when runningOnly) for --all.
func containerIDs(ctx context.Context, c *client.Client, refs []string, all, runningOnly bool) ([]*runtimeapi.Container, error) {
	if all {
		return c.ListContainers(ctx, client.ContainerFilter{All: !runningOnly})
	}
	out := make([]*runtimeapi.Container, 0, len(refs))
	for _, ref := range refs {
		ctr, err := c.ResolveContainer(ctx, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, ctr)
	}
	return out, nil
}

// podIDs resolves every pod reference, or lists every pod for --all.
func podIDs(ctx context.Context, c *client.Client, refs []string, all bool) ([]*runtimeapi.PodSandbox, error) {
	if all {
		return c.ListPods(ctx, client.PodFilter{})
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(refs))
	for _, ref := range refs {
		pod, err := c.ResolvePod(ctx, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, pod)
	}
	return out, nil
}

// printID prints an ID on its own line: the command's output, so a failed
// write (a closed pipe) is the command's failure.
// each runs op on each item's ID in order and prints format (with the ID)
// after each success; the first failure stops the rest.
func each[T interface{ GetId() string }](items []T, out io.Writer, format string, op func(id string) error) error {
	for _, it := range items {
		if err := op(it.GetId()); err != nil {
			return err
		}
		if err := printID(out, format, it.GetId()); err != nil {
			return err
		}
	}
	return nil
}

// printID prints a line naming what was made or removed; IDs and names are
// the runtime's, escaped (termsafe.Text) like everything it says.
func printID(out io.Writer, format string, args ...any) error {
	if _, err := io.WriteString(out, termsafe.Text(fmt.Sprintf(format, args...))+"\n"); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// notice prints a diagnostic line, escaped (it quotes the runtime); when
// stderr is gone there is nobody to tell, so its write error is dropped.
func notice(w io.Writer, format string, args ...any) {
	_, _ = io.WriteString(w, termsafe.Text(fmt.Sprintf("crisp: "+format, args...))+"\n")
}
