package mockruntime

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// eventBuffer is how many events a GetContainerEvents client may fall
// behind before the mock ends its stream (a client must keep up, as with
// containerd, whose buffer is of the same order).
const eventBuffer = 1000

// eventHub fans container and pod lifecycle events out to the
// GetContainerEvents streams.
type eventHub struct {
	mu   sync.Mutex
	subs map[*eventSub]struct{}
}

// eventSub is one stream's queue; overflowed is closed when it fell behind.
type eventSub struct {
	ch         chan *runtimeapi.ContainerEventResponse
	overflowed chan struct{}
}

func newEventHub() *eventHub { return &eventHub{subs: map[*eventSub]struct{}{}} }

func (h *eventHub) subscribe() *eventSub {
	s := &eventSub{ch: make(chan *runtimeapi.ContainerEventResponse, eventBuffer), overflowed: make(chan struct{})}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

func (h *eventHub) unsubscribe(s *eventSub) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// publish queues ev for every stream; one that is full is dropped.
func (h *eventHub) publish(ev *runtimeapi.ContainerEventResponse) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- ev:
		default:
			delete(h.subs, s)
			close(s.overflowed)
		}
	}
}

// podEvent publishes a lifecycle event of pod p (its ID as the container
// ID, as containerd reports sandbox events).
func (r *Runtime) podEvent(p *pod, typ runtimeapi.ContainerEventType) {
	r.events.publish(&runtimeapi.ContainerEventResponse{
		ContainerId:        p.id,
		ContainerEventType: typ,
		CreatedAt:          time.Now().UnixNano(),
		PodSandboxStatus:   p.status(),
		ContainersStatuses: r.containerStatuses(p.id),
	})
}

// containerEvent publishes a lifecycle event of container c. The caller
// holds neither r.mu nor c.mu.
func (r *Runtime) containerEvent(c *container, typ runtimeapi.ContainerEventType) {
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId:        c.id,
		ContainerEventType: typ,
		CreatedAt:          time.Now().UnixNano(),
		ContainersStatuses: r.containerStatuses(c.podID),
	}
	if p := r.podOf(c); p != nil {
		ev.PodSandboxStatus = p.status()
	}
	if typ == runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT {
		// A deleted container is in no list any more: report its last
		// status.
		ev.ContainersStatuses = append(ev.ContainersStatuses, c.status())
	}
	r.events.publish(ev)
}

// podOf is c's pod, or nil once removed.
func (r *Runtime) podOf(c *container) *pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pods[c.podID]
}

func (r *Runtime) containerStatuses(podID string) []*runtimeapi.ContainerStatus {
	var out []*runtimeapi.ContainerStatus
	for _, c := range r.containersOf(podID) {
		out = append(out, c.status())
	}
	return out
}

// GetContainerEvents streams lifecycle events (created, started, stopped,
// deleted) of containers and pods from now on, until the client goes away
// or the runtime closes.
func (s *runtimeService) GetContainerEvents(_ *runtimeapi.GetEventsRequest, stream runtimeapi.RuntimeService_GetContainerEventsServer) error {
	if s.r.cfg.Quirks.CloseEvents {
		return nil // CRI-O with enable_pod_events = false: an empty stream, status OK
	}
	sub := s.r.events.subscribe()
	defer s.r.events.unsubscribe(sub)
	// Headers tell the client the subscription is in place: a client that
	// waits for them (stream.Header) misses no event after.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	ctx := stream.Context()
	for {
		select {
		case ev := <-sub.ch:
			if err := stream.Send(ev); err != nil {
				return err
			}
		case <-sub.overflowed:
			return status.Errorf(codes.ResourceExhausted, "the event stream fell %d events behind and was dropped; read events as they come", eventBuffer)
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-s.r.done:
			return status.Error(codes.Unavailable, "the mock runtime is shutting down")
		}
	}
}
