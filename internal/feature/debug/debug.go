// Package debug runs `crisp debug`: tools in a running container's
// namespaces while the container runs on untouched, for targets with no
// shell or tools of their own. It has two ways in and picks the one that
// works:
//
//   - container: a debug container in the target's pod, from one exact
//     image (DefaultImage, or --image; never a search), its PID namespace
//     the target's (the CRI's NamespaceMode TARGET), network and IPC the
//     pod's, under the runtime's default seccomp profile, capabilities by
//     kubectl debug's profiles; removed on every way out, and labelled with
//     an owner whose lock (Leases) tells a live session from a leftover
//     that the next run or --cleanup removes;
//   - host: the node's static busybox, from a sealed in-memory copy, in the
//     target's namespaces and root with the target's credentials (HostEntry),
//     so that nothing in it is a door to the node, killed with its process
//     group by a watcher on the node when crisp ends (Watch).
//
// It talks to the runtime through the CRI client and streams through the
// session package; it writes only to the streams it is given.
package debug

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
)

// The ways into the target (--way): auto tries the container way, then
// the host way.
const (
	WayContainer cmdutil.Way = "container"
	WayHost      cmdutil.Way = "host"
)

// Ways are debug's ways in auto's order.
var Ways = []cmdutil.Way{WayContainer, WayHost}

// DefaultCommand is what runs when no command is given: a shell.
var DefaultCommand = []string{"sh"}

// Request is one debug session.
type Request struct {
	Target     string
	Command    []string
	Stdin, TTY bool
	// Image is --image; empty picks a busybox the node has.
	Image   string
	Profile Profile
	Way     cmdutil.Way
	// Keep leaves the debug container behind (--keep).
	Keep   bool
	Offers []transport.Offer
	TLS    cmdutil.TLSFlags
}

// Runner runs debug sessions; its fields are what it needs from the world
// (tests replace them).
type Runner struct {
	Deps session.Deps
	// Leases is where the owners of debug containers keep the locks that
	// tell a live owner from a gone one (DefaultLeases).
	Leases Leases
	// Host enters the target's namespaces from the node (HostEntry).
	Host HostEntry
	// Watcher starts the watcher of a host-way session (WatchCommand
	// when nil): a process that kills the session when crisp ends.
	Watcher func(pgid int) *exec.Cmd
	// Stragglers kills what is left in a debug container whose stop the
	// runtime cannot finish (KillStragglers when nil).
	Stragglers func(containerID string) ([]Straggler, error)
}

// KubeletKillNote is what was seen on a kubelet node: the kubelet
// (Kubernetes 1.37, containerd 1.6) killed a debug container added to its
// pod 1.4 to 2.6 s after it started (exit 137, two runs), then left it for crisp to
// remove.
const KubeletKillNote = "seen: killed 1.4-2.6 s after its start"

// kubeletOwned reports whether a kubelet created target: it labels every
// container with its pod's UID.
func kubeletOwned(target *runtimeapi.Container) bool {
	return target.GetLabels()[client.KubeletPodUIDLabel] != ""
}

// ErrNoWay is wrapped by the error of a session for which no way in worked.
var ErrNoWay = errors.New("no way into the target worked")

// Run runs r's session and returns the command's exit status as an error
// (nil for 0), as exec does.
func (rn Runner) Run(ctx context.Context, r Request) error {
	run, err := rn.Deps.ConnectRunning(ctx, "debug", "target", "debug needs a running target", r.Target)
	if err != nil {
		return err
	}
	cli, target := run.Cli, run.Container
	defer func() { _ = cli.Close() }() // closing a gRPC connection reports nothing to act on
	if len(r.Command) == 0 {
		r.Command = DefaultCommand
	}
	if _, err := rn.sweep(ctx, cli, false, Owner{}); err != nil {
		rn.Deps.Logf("debug: removing leftover debug containers: %v (crisp debug --cleanup retries)", err)
	}

	var tried []string
	tryContainer := r.Way != WayHost
	if kubeletOwned(target) {
		switch r.Way {
		case cmdutil.WayAuto:
			rn.Deps.Logf("debug: a kubelet owns the target's pod (%s): it kills a container it did not create within seconds, so the host way", KubeletKillNote)
			tried = append(tried, "container: skipped, a kubelet owns the target's pod")
			tryContainer = false
		case WayContainer:
			_, _ = fmt.Fprintf(rn.Deps.Streams.ErrOut, "crisp: warning: a kubelet owns the target's pod; it kills a container it did not create within seconds (%s): use --way host\n", KubeletKillNote) // the error stream is the last resort: a failed write there has nowhere to go
		}
	}
	if tryContainer {
		plan, err := rn.planContainer(ctx, cli, target, r)
		if err == nil {
			rn.Deps.Logf("debug: way: container (image %s, profile %s, PID namespace of %s)", plan.image, r.Profile, client.ShortID(target.Id))
			err = rn.runContainer(ctx, cli, plan, r)
			if !errors.As(err, new(notStarted)) || r.Way == WayContainer || ctx.Err() != nil {
				return err
			}
		}
		if r.Way == WayContainer || ctx.Err() != nil {
			return err
		}
		rn.Deps.Logf("debug: container way not possible: %v", err)
		tried = append(tried, "container: "+err.Error())
	}
	entry, err := rn.Host.plan(ctx, run)
	if err == nil {
		rn.Deps.Logf("debug: way: host (into the namespaces and root of PID %d, with its credentials)", entry.pid)
		logTargetPID(rn.Deps, entry.nsPID)
		return rn.runHost(ctx, entry, r)
	}
	if r.Way == WayHost {
		return err
	}
	tried = append(tried, "host: "+err.Error())
	return fmt.Errorf("debug %s: %w; tried %s", r.Target, ErrNoWay, strings.Join(tried, "; "))
}

// Cleanup removes the debug containers left by crisp processes that no
// longer run (including those kept with --keep) and says how many it
// removed; it names on stderr those whose owner it cannot check.
func (rn Runner) Cleanup(ctx context.Context) (int, error) {
	cli, _, err := rn.dial()
	if err != nil {
		return 0, err
	}
	defer func() { _ = cli.Close() }() // closing a gRPC connection reports nothing to act on
	return rn.sweep(ctx, cli, true, Owner{})
}

func (rn Runner) dial() (*client.Client, client.Settings, error) {
	settings, err := rn.Deps.Settings()
	if err != nil {
		return nil, settings, err
	}
	cli, err := rn.Deps.Dial(settings)
	return cli, settings, err
}

// logTargetPID says with -v where the target's files are, as the command
// sees them.
func logTargetPID(d session.Deps, nsPID int) {
	if nsPID > 0 {
		d.Logf("debug: the target is PID %d in its PID namespace: its files are at /proc/%d/root ($%s)", nsPID, nsPID, TargetPIDEnv)
	}
}
