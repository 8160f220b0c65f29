package mockruntime

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// newID returns a container or pod ID shaped like containerd's: 64 hex digits.
func newID() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// pod is a pod sandbox: bookkeeping only, since pods share the host's
// network namespace (its loopback is the pod's).
type pod struct {
	id             string
	config         *runtimeapi.PodSandboxConfig
	runtimeHandler string
	createdAt      int64

	mu    sync.Mutex
	state runtimeapi.PodSandboxState
	// proxies map the pod's host ports while it is ready.
	proxies []*portProxy
	// movedPorts maps a container port of the pod to the loopback port its
	// built-in web server took instead, when another program held the
	// container port (pods of the mock share the host loopback; on a real
	// runtime every pod has its own). Port-forward and port mappings follow it.
	movedPorts map[int32]int
}

// hostNetwork reports whether the pod uses the node's network namespace.
func (p *pod) hostNetwork() bool {
	return p.config.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// loopbackPort is the host loopback port that serves the pod's port.
func (p *pod) loopbackPort(port int32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if moved, ok := p.movedPorts[port]; ok {
		return moved
	}
	return int(port)
}

// movePort records that the pod's port is served on loopback port moved; a
// moved of 0 forgets it.
func (p *pod) movePort(port int32, moved int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if moved == 0 {
		delete(p.movedPorts, port)
		return
	}
	if p.movedPorts == nil {
		p.movedPorts = map[int32]int{}
	}
	p.movedPorts[port] = moved
}

func (p *pod) getState() runtimeapi.PodSandboxState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// task is what runs for a container: a host process or the built-in web
// server.
type task interface {
	signal(sig syscall.Signal)
}

// container is one container: its configuration and, once started, its
// process, output fan-out and exec processes.
type container struct {
	r         *Runtime
	id        string
	podID     string
	config    *runtimeapi.ContainerConfig
	image     *runtimeapi.Image
	imageName string // normalized
	kind      imageKind
	webPort   int
	createdAt int64
	logPath   string
	spec      procSpec // for host processes

	mu         sync.Mutex
	state      runtimeapi.ContainerState
	startedAt  int64
	finishedAt int64
	exitCode   int32
	reason     string
	message    string
	task       task
	pid        int
	stdin      io.Writer // where attached input goes; nil: no stdin
	stdinDone  bool      // stdin closed (stdin_once after the first attach)
	closeStdin func()
	proc       *hostProc // nil for the web server
	log        *criLog
	// exited is closed when the task has ended and its output is drained.
	exited chan struct{}
	execs  map[*hostProc]struct{}

	outMu     sync.Mutex
	attachers map[*attacher]struct{}

	// Usage bookkeeping (under mu): the highest totals measured and the
	// last CPU sample, for a rate (see stats.go).
	maxCPU, maxWrite uint64
	lastCPU          cpuSample
	// resources are the limits asked for (the config's, then updates'):
	// reported, not enforced (the mock makes no cgroups).
	resources *runtimeapi.LinuxContainerResources
}

// attacher is one attached client's output.
type attacher struct {
	out, errOut io.Writer
	// gone is closed when writing to the client failed.
	gone     chan struct{}
	goneOnce sync.Once
}

// status is a snapshot for ContainerStatus and ListContainers.
func (c *container) status() *runtimeapi.ContainerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    c.config.GetMetadata(),
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exitCode,
		Image:       &runtimeapi.ImageSpec{Image: c.imageName, UserSpecifiedImage: c.config.GetImage().GetImage()},
		ImageRef:    c.image.Id,
		ImageId:     c.image.Id,
		Reason:      c.reason,
		Message:     c.message,
		Labels:      maps.Clone(c.config.GetLabels()),
		Annotations: maps.Clone(c.config.GetAnnotations()),
		LogPath:     c.logPath,
		Resources:   &runtimeapi.ContainerResources{Linux: c.resources},
		Mounts:      c.config.GetMounts(),
	}
}

// memoryLimit is the memory limit asked for, 0 for none.
func (c *container) memoryLimit() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return uint64(max(c.resources.GetMemoryLimitInBytes(), 0))
}

func (c *container) getState() runtimeapi.ContainerState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// start runs the container's task. The caller holds r.mu and has checked
// that the runtime is not closing, so Close sees every task it must end.
func (c *container) start(pd *pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return fmt.Errorf("container %s is %s; only a created container can be started", c.id, stateName(c.state))
	}
	log, err := openCRILog(c.logPath)
	if err != nil {
		return c.failStart(fmt.Errorf("open the log file %s: %w", c.logPath, err))
	}
	c.log = log
	c.exited = make(chan struct{})
	c.execs = map[*hostProc]struct{}{}
	c.attachers = map[*attacher]struct{}{}

	if c.kind == imagePause && c.spec.argv == nil {
		pt := newPauseTask()
		c.task = pt
		c.markRunning()
		c.r.goTracked(func() {
			<-pt.done
			c.finish(pt.exitCode)
		})
		return nil
	}
	if c.kind == imageWebServer && c.spec.argv == nil {
		return c.startWebServer(pd)
	}

	p, err := startProc(c.spec)
	if err != nil {
		return c.failStart(err)
	}
	c.task, c.proc, c.pid = p, p, p.cmd.Process.Pid
	if w := p.stdinWriter(); w != nil {
		c.stdin = w
		c.closeStdin = func() {
			if p.stdin != nil {
				_ = p.stdin.Close()
			}
		}
	}
	c.markRunning()
	c.r.goTracked(func() {
		var pumps sync.WaitGroup
		for _, o := range p.outputs() {
			pumps.Add(1)
			c.r.goTracked(func() {
				defer pumps.Done()
				p.pump(o.f, func(b []byte) error { c.emit(o.stream, b); return nil })
			})
		}
		p.wait()
		// The container ends with its main process, as a pid namespace
		// does: what it left running is killed (its output still drains).
		p.kill()
		p.drain(&pumps)
		c.finish(p.exitCode)
	})
	return nil
}

// startWebServer runs the built-in web server of a web-server image. In a
// pod with its own network a port that another program holds moves to a
// free loopback port (the pod's port-forward and port mappings follow it), so
// a host's web server or a parallel test run cannot keep the container from
// starting; a host-network pod has no such way out.
func (c *container) startWebServer(p *pod) error {
	movable := !p.hostNetwork()
	ws, err := startWebServer(c.id, c.webPort, movable, c.emit)
	if err != nil {
		return c.failStart(err)
	}
	if ws.port != c.webPort {
		p.movePort(int32(c.webPort), ws.port)
	}
	c.task = ws
	c.markRunning()
	c.r.goTracked(func() {
		if strings.Contains(c.imageName, "httpd") {
			// httpd logs its start to stderr; nginx says nothing.
			c.emit(streamStderr, fmt.Appendf(nil, "httpd: the mock runtime's built-in web server serves the pod's port %d on 127.0.0.1:%d\n", c.webPort, ws.port))
		}
		ws.serve()
		if ws.port != c.webPort {
			p.movePort(int32(c.webPort), 0)
		}
		c.finish(0)
	})
	return nil
}

func (c *container) markRunning() {
	c.state = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.startedAt = time.Now().UnixNano()
}

// failStart leaves the container exited with the reason, as a runtime does
// when the process cannot start.
func (c *container) failStart(err error) error {
	now := time.Now().UnixNano()
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.startedAt, c.finishedAt = now, now
	c.exitCode = 128
	c.reason = "StartError"
	c.message = err.Error()
	c.log.close()
	c.log = nil
	if c.exited == nil {
		c.exited = make(chan struct{})
	}
	close(c.exited)
	return err
}

// finish records the end of the task, ends the container's execs (they die
// with the container on a real runtime) and wakes the waiters.
func (c *container) finish(code int) {
	c.mu.Lock()
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt = time.Now().UnixNano()
	c.exitCode = int32(code)
	if c.reason == "" {
		c.reason = "Completed"
		if code != 0 {
			c.reason = "Error"
		}
	}
	execs := make([]*hostProc, 0, len(c.execs))
	for p := range c.execs {
		execs = append(execs, p)
	}
	c.log.close()
	close(c.exited)
	c.mu.Unlock()
	for _, p := range execs {
		p.kill()
	}
	c.r.containerEvent(c, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// stop ends a running container: SIGTERM to its process group, SIGKILL once
// timeout (seconds) has passed; 0 kills at once. It returns when the
// container has exited.
func (c *container) stop(timeout int64) {
	c.mu.Lock()
	t, exited, running := c.task, c.exited, c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	c.mu.Unlock()
	if !running {
		return
	}
	if timeout > 0 {
		t.signal(syscall.SIGTERM)
		timer := time.NewTimer(time.Duration(timeout) * time.Second)
		defer timer.Stop()
		select {
		case <-exited:
			return
		case <-timer.C:
		}
	}
	t.signal(syscall.SIGKILL)
	<-exited
}

// kill sends SIGKILL to a running container without waiting for it.
func (c *container) kill() {
	c.mu.Lock()
	t, running := c.task, c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	c.mu.Unlock()
	if running {
		t.signal(syscall.SIGKILL)
	}
}

// reopenLog closes the log file and opens its path again.
func (c *container) reopenLog() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container %s is %s; only a running container's log can be reopened", c.id, stateName(c.state))
	}
	c.log.close()
	log, err := openCRILog(c.logPath)
	if err != nil {
		c.log = nil
		return status.Errorf(codes.Internal, "reopen the log %s of container %s: %v", c.logPath, c.id, err)
	}
	c.log = log
	return nil
}

// closeLog closes the log of a container that never finished (Close).
func (c *container) closeLog() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log.close()
}

// emit sends output to the log and to every attached client.
func (c *container) emit(stream string, p []byte) {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	log.write(stream, p)

	c.outMu.Lock()
	defer c.outMu.Unlock()
	for a := range c.attachers {
		w := a.out
		if stream == streamStderr {
			w = a.errOut
		}
		if w == nil {
			continue
		}
		if _, err := w.Write(p); err != nil {
			delete(c.attachers, a)
			a.goneOnce.Do(func() { close(a.gone) })
		}
	}
}

// addAttacher registers a client for the output from now on; false when
// the container has already exited. exited is the container's channel.
func (c *container) addAttacher(a *attacher, exited <-chan struct{}) bool {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	select {
	case <-exited:
		return false
	default:
	}
	c.attachers[a] = struct{}{}
	return true
}

func (c *container) removeAttacher(a *attacher) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	delete(c.attachers, a)
}

// writeStdin passes attached input to the process; input for a container
// without stdin (or whose stdin is closed) is dropped.
func (c *container) writeStdin(p []byte) error {
	c.mu.Lock()
	w, done := c.stdin, c.stdinDone
	c.mu.Unlock()
	if w == nil || done {
		return nil
	}
	_, err := w.Write(p)
	return err
}

// endStdin closes the process's stdin (stdin_once: the first attached
// client's end of input is the container's).
func (c *container) endStdin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stdinDone || c.closeStdin == nil {
		return
	}
	c.stdinDone = true
	c.closeStdin()
}

func stateName(s runtimeapi.ContainerState) string {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return "created"
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return "running"
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return "exited"
	}
	return "in an unknown state"
}
