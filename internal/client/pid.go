package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// ContainerPID is a running container's process ID on the node, from the
// runtime's verbose container status: containerd, CRI-O and the mock put
// it at "pid" in the JSON under the info map's "info" key. The CRI has no
// field for it, so a runtime that says nothing there has no PID to give.
func (c *Client) ContainerPID(ctx context.Context, id string) (int, error) {
	st, err := c.ContainerStatus(ctx, id, true)
	if err != nil {
		return 0, err
	}
	pid, err := InfoPID(st.GetInfo())
	if err != nil {
		return 0, fmt.Errorf("the runtime at %s: %w", c.Endpoint, err)
	}
	return pid, nil
}

// ErrNoPID is wrapped by InfoPID's error when a verbose status gives no
// process ID.
var ErrNoPID = errors.New("no process ID in the runtime's verbose container status")

// InfoPID reads a container's PID from a verbose ContainerStatus info map:
// "info" first (containerd, CRI-O), then any other key whose JSON has a
// positive "pid", in key order.
func InfoPID(info map[string]string) (int, error) {
	keys := make([]string, 0, len(info))
	for k := range info {
		if k != "info" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := info["info"]; ok {
		keys = append([]string{"info"}, keys...)
	}
	var firstErr error
	for _, k := range keys {
		var v struct {
			PID int `json:"pid"`
		}
		if err := json.Unmarshal([]byte(info[k]), &v); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w (%q is not JSON: %w)", ErrNoPID, k, err)
			}
			continue
		}
		if v.PID > 0 {
			return v.PID, nil
		}
	}
	if firstErr != nil {
		return 0, firstErr
	}
	if len(keys) == 0 {
		return 0, fmt.Errorf("%w (it has no info map)", ErrNoPID)
	}
	return 0, ErrNoPID
}
