// Package lifecycle is what crictl's lifecycle verbs do (runp, create,
// start, run, stop, rm, stopp, rmp, update, checkpoint, logs), over a
// runtime client: the commands in cmd/crisp only bind flags and call it.
// It prints IDs and notices to the writers it is given and never exits.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// resolveContainer is client.ResolveContainer whose ambiguity error names
// each candidate's pod too, so the user can tell them apart.
func resolveContainer(ctx context.Context, c *client.Client, ref string) (*runtimeapi.Container, error) {
	ctr, err := c.ResolveContainer(ctx, ref)
	var amb *client.AmbiguousError
	if !errors.As(err, &amb) {
		return ctr, err
	}
	all, lerr := c.ListContainers(ctx, client.ContainerFilter{All: true})
	pods, perr := c.ListPods(ctx, client.PodFilter{})
	if lerr != nil || perr != nil {
		return nil, err
	}
	podName := map[string]string{}
	for _, p := range pods {
		podName[p.GetId()] = p.GetMetadata().GetNamespace() + "/" + p.GetMetadata().GetName()
	}
	var cands []string
	for _, x := range all {
		if x.GetMetadata().GetName() == ref || strings.HasPrefix(x.GetId(), ref) {
			cands = append(cands, fmt.Sprintf("%s (%s, %s, pod %s)", x.GetId(), x.GetMetadata().GetName(),
				client.ContainerStateName(x.GetState()), podName[x.GetPodSandboxId()]))
		}
	}
	sort.Strings(cands)
	if len(cands) < 2 {
		return nil, err
	}
	return nil, &client.AmbiguousError{Kind: amb.Kind, Ref: ref, Candidates: cands}
}

// resolvePod is client.ResolvePod whose ambiguity error names each
// candidate's namespace and state.
func resolvePod(ctx context.Context, c *client.Client, ref string) (*runtimeapi.PodSandbox, error) {
	pod, err := c.ResolvePod(ctx, ref)
	var amb *client.AmbiguousError
	if !errors.As(err, &amb) {
		return pod, err
	}
	pods, perr := c.ListPods(ctx, client.PodFilter{})
	if perr != nil {
		return nil, err
	}
	var cands []string
	for _, p := range pods {
		if p.GetMetadata().GetName() == ref || strings.HasPrefix(p.GetId(), ref) {
			cands = append(cands, fmt.Sprintf("%s (%s/%s, %s)", p.GetId(), p.GetMetadata().GetNamespace(),
				p.GetMetadata().GetName(), client.PodStateName(p.GetState())))
		}
	}
	sort.Strings(cands)
	if len(cands) < 2 {
		return nil, err
	}
	return nil, &client.AmbiguousError{Kind: amb.Kind, Ref: ref, Candidates: cands}
}

// containerIDs resolves every reference, or lists every container (only
// the running ones when runningOnly) for --all.
func containerIDs(ctx context.Context, c *client.Client, refs []string, all, runningOnly bool) ([]*runtimeapi.Container, error) {
	if all {
		return c.ListContainers(ctx, client.ContainerFilter{All: !runningOnly})
	}
	out := make([]*runtimeapi.Container, 0, len(refs))
	for _, ref := range refs {
		ctr, err := resolveContainer(ctx, c, ref)
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
		pod, err := resolvePod(ctx, c, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, pod)
	}
	return out, nil
}

// printID prints an ID on its own line: the command's output, so a failed
// write (a closed pipe) is the command's failure.
func printID(out io.Writer, format string, args ...any) error {
	if _, err := fmt.Fprintf(out, format+"\n", args...); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// notice prints a diagnostic line; when stderr is gone there is nobody to
// tell, so its write error is dropped.
func notice(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, "crisp: "+format+"\n", args...)
}
