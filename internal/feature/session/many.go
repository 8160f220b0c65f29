package session

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/moby/term"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// Many is exec in every container crictl's selectors match (running ones
// unless --state, -l or -n say otherwise): exec's selectors bind to Select
// (cmd/crisp/exec.go), which the command checks into Filter.
type Many struct {
	Select   cmdutil.ContainerSelectors
	Parallel int
	// Quiet: no summary line (-q); IgnoreErrors: exit 0 (-e).
	Quiet        bool
	IgnoreErrors bool

	// Filter selects the containers (set by the command's Validate).
	Filter client.ContainerFilter
}

// ExecMany execs e's command, offers and streaming flags in every running
// match of m and returns the highest remote code (125 if crisp failed
// anywhere), the summary already printed (fanout.go runs the sessions).
func (d Deps) ExecMany(ctx context.Context, e *Exec, m *Many) error {
	cli, settings, err := d.dial()
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }() // closing a finished gRPC connection: nothing to report
	ctrs, err := cli.ListContainers(ctx, m.Filter)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if len(ctrs) == 0 {
		return errors.New("exec: no container matches the selectors (--label, --pod, --name, --image, --state, -l, -n; see `crisp ps -a`)")
	}
	cfg, err := d.config(e.TLS, settings, nil, cmdutil.Configure(e.Trace.Apply, e.Peer.Apply))
	if err != nil {
		return err
	}
	targets := make([]Target, len(ctrs))
	for i, c := range ctrs {
		targets[i] = Target{ID: c.Id, Name: c.GetMetadata().GetName()}
	}
	_, colour := term.GetFdInfo(d.Streams.Out) // true only for a terminal
	res := FanOut(ctx, targets, FanOutOptions{Parallel: m.Parallel, Out: d.Streams.Out, Err: d.Streams.ErrOut, Color: colour},
		func(ctx context.Context, t Target, stdout, stderr io.Writer) (int, error) {
			req := &runtimeapi.ExecRequest{ContainerId: t.ID, Cmd: e.Command, Stdout: true, Stderr: true}
			errTail := &tailWriter{w: stderr}
			_, err := d.Stream(ctx, "exec", cli.ExecSource("exec", req), e.Offers, cfg, remotecommand.Streams{Stdout: stdout, Stderr: errTail})
			var coded transport.RemoteExit
			if err = errTail.startFailure(err); errors.As(err, &coded) && ctx.Err() == nil {
				return coded.ExitStatus(), nil
			}
			return 0, err
		})
	if !m.Quiet {
		_, _ = fmt.Fprintf(d.Streams.ErrOut, "crisp: exec: %s\n", res.Summary()) // stderr unwritable: nowhere else to say it
	}
	if code := res.ExitCode(); code != 0 {
		return cmdutil.RemoteStatus{Code: code}
	}
	return nil
}
