package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The streaming calls (Exec, Attach, PortForward) answer with a URL that a
// streaming transport then upgrades. Runtimes hand out single-use tokens, so
// every attempt (every protocol a transport falls back to) needs a fresh
// call: the sources below make one CRI call per URL. Their types are plain
// func types, the shapes internal/transport's URL sources have, so they
// convert to those without this package importing transport.

// ExecSource returns a source of exec URLs: one Exec call for req per URL.
// op names the command in errors ("exec: Exec call for container ...");
// empty for none.
func (c *Client) ExecSource(op string, req *runtimeapi.ExecRequest) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		url, _, err := c.exec(ctx, op, req)
		return url, err
	}
}

// UnresolvedExecSource is ExecSource for a container the user named ref,
// which has the form of a full ID (IsFullID) and goes to the runtime as it
// is: resolving it would cost a ListContainers call on every exec, and
// crictl passes IDs through the same way. Only when the runtime answers
// that it knows no such container is ref resolved (ResolveContainer: a
// name that looks like an ID is still found, and a ref that names nothing
// gets the error that says what was tried) and the call made again for the
// container found. It sets req's container ID.
func (c *Client) UnresolvedExecSource(op, ref string, req *runtimeapi.ExecRequest) func(context.Context) (string, error) {
	req.ContainerId = ref
	resolved := false
	return func(ctx context.Context) (string, error) {
		url, code, err := c.exec(ctx, op, req)
		if code != codes.NotFound || resolved {
			return url, err
		}
		resolved = true
		ctr, rerr := c.ResolveContainer(ctx, ref)
		if rerr != nil {
			return "", rerr
		}
		if ctr.Id == req.ContainerId {
			return url, err // listed, yet unknown to Exec: the runtime's answer stands
		}
		req.ContainerId = ctr.Id
		url, _, err = c.exec(ctx, op, req)
		return url, err
	}
}

// exec makes one Exec call and returns the URL, the call's gRPC status code
// and the call's error as Call describes it.
func (c *Client) exec(ctx context.Context, op string, req *runtimeapi.ExecRequest) (string, codes.Code, error) {
	what := callName(op, "Exec call for container "+ShortID(req.GetContainerId()))
	var resp *runtimeapi.ExecResponse
	code := codes.OK
	err := c.Call(ctx, what, func(ctx context.Context) (err error) {
		resp, err = c.Runtime.Exec(ctx, req)
		code = status.Code(err)
		return err
	})
	return resp.GetUrl(), code, err
}

// AttachSource returns a source of attach URLs: one Attach call for req per
// URL. op is as for ExecSource.
func (c *Client) AttachSource(op string, req *runtimeapi.AttachRequest) func(context.Context) (string, error) {
	what := callName(op, "Attach call for container "+ShortID(req.GetContainerId()))
	return func(ctx context.Context) (string, error) {
		var resp *runtimeapi.AttachResponse
		err := c.Call(ctx, what, func(ctx context.Context) (err error) {
			resp, err = c.Runtime.Attach(ctx, req)
			return err
		})
		return resp.GetUrl(), err
	}
}

// PortForwardSource returns a source of port-forward URLs for a pod: one
// PortForward call per URL, with the ports the caller passes in the request
// (protocols that carry no port in their stream, such as the direct
// WebSocket one, need the runtime to read them there). op is as for
// ExecSource.
func (c *Client) PortForwardSource(op, podID string) func(context.Context, []uint16) (string, error) {
	what := callName(op, "PortForward call for pod "+ShortID(podID))
	return func(ctx context.Context, ports []uint16) (string, error) {
		req := &runtimeapi.PortForwardRequest{PodSandboxId: podID}
		for _, p := range ports {
			req.Port = append(req.Port, int32(p))
		}
		var resp *runtimeapi.PortForwardResponse
		err := c.Call(ctx, what, func(ctx context.Context) (err error) {
			resp, err = c.Runtime.PortForward(ctx, req)
			return err
		})
		return resp.GetUrl(), err
	}
}

func callName(op, call string) string {
	if op == "" {
		return call
	}
	return op + ": " + call
}

// ShortIDLength is how many characters of a container, pod or image ID
// crisp shows where it shortens one: in tables, messages and exec --label's
// prefixes alike (crictl's truncation), so an ID read in one can be found in
// another.
const ShortIDLength = 13

// ShortID is the ShortIDLength form of an ID; shorter IDs are returned whole.
func ShortID(id string) string {
	return id[:min(len(id), ShortIDLength)]
}

// ExitPollInterval is how often WaitForExit asks for a container's status.
const ExitPollInterval = 50 * time.Millisecond

// ErrStillRunning is WaitForExit's answer when the container had not exited
// within the time it was given.
var ErrStillRunning = errors.New("container still running")

// WaitForExit waits, at most within, for the runtime to record that
// container id has exited, and returns its exit code. The stream of a
// container's main process (attach) can end a moment before the runtime
// records the exit, hence the polling. It returns ErrStillRunning when the
// container is still running after within, ctx's error (wrapped) when ctx
// ends first, and the status call's error when the status cannot be read.
func (c *Client) WaitForExit(ctx context.Context, id string, within time.Duration) (int32, error) {
	deadline := time.Now().Add(within)
	for {
		resp, err := c.ContainerStatus(ctx, id, false)
		if err != nil {
			if ctx.Err() != nil {
				return 0, fmt.Errorf("waiting for container %s to exit: %w", ShortID(id), ctx.Err())
			}
			return 0, err
		}
		if st := resp.GetStatus(); st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			return st.GetExitCode(), nil
		}
		if !time.Now().Before(deadline) {
			return 0, ErrStillRunning
		}
		timer := time.NewTimer(ExitPollInterval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return 0, fmt.Errorf("waiting for container %s to exit: %w", ShortID(id), ctx.Err())
		case <-timer.C:
		}
	}
}
