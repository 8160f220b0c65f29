package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrEventsUnsupported means the runtime does not serve GetContainerEvents
// (containerd 1.6, for one).
var ErrEventsUnsupported = errors.New("the runtime does not serve container events (GetContainerEvents is unimplemented)")

// ErrEventsClosed means the runtime ended the event stream with an OK
// status while the caller still wanted it: CRI-O does so at once unless its
// enable_pod_events is true.
var ErrEventsClosed = errors.New("the runtime closed the container event stream (CRI-O does at once unless its enable_pod_events is true)")

// Events streams the runtime's container events to each until ctx ends,
// the runtime closes the stream (ErrEventsClosed), or each returns an
// error. The stream has no timeout: it lasts as long as the caller wants it.
func (c *Client) Events(ctx context.Context, each func(*runtimeapi.ContainerEventResponse) error) error {
	stream, err := c.Runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		return c.eventsError(err)
	}
	for {
		ev, err := stream.Recv()
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return fmt.Errorf("events: runtime at %s: %w", c.Endpoint, ErrEventsClosed)
		case err != nil:
			return c.eventsError(err)
		}
		if err := each(ev); err != nil {
			return err
		}
	}
}

func (c *Client) eventsError(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("events: runtime at %s: %w", c.Endpoint, ErrEventsUnsupported)
	}
	return c.describe(c.Endpoint, "streaming container events", err)
}
