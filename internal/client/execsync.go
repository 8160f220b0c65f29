package client

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ExecSync runs cmd in container id with the ExecSync call and returns what
// it printed and its exit code. timeout is the runtime's limit on the
// command (rounded up to whole seconds; 0: none). The call itself may take
// that long plus the usual request timeout; without a timeout it may run as
// long as the command does, bounded only by ctx. op names the command in
// errors, as for ExecSource.
func (c *Client) ExecSync(ctx context.Context, op, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	call := *c
	if timeout > 0 {
		call.Timeout = timeout + c.Timeout
	} else {
		call.Timeout = 0
	}
	secs := int64((timeout + time.Second - 1) / time.Second)
	var resp *runtimeapi.ExecSyncResponse
	err := call.Call(ctx, callName(op, "ExecSync call for container "+ShortID(id)), func(ctx context.Context) (err error) {
		resp, err = call.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: secs})
		return err
	})
	return resp, err
}
