package debug

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// Labels on every debug container: what lets the next run, or --cleanup,
// find the containers of a crisp that could not remove its own (SIGKILL).
const (
	// LabelDebug marks a debug container ("1").
	LabelDebug = "io.crisp.debug"
	// LabelOwner names the crisp process that created it (Owner.String).
	LabelOwner = "io.crisp.debug.owner"
	// LabelTarget is the full ID of the container it debugs.
	LabelTarget = "io.crisp.debug.target"
	// LabelKeep marks a container kept with --keep: the next run leaves it
	// alone; --cleanup removes it.
	LabelKeep = "io.crisp.debug.keep"
)

// Profile is kubectl debug's name for a set of privileges of the debug
// container (--profile).
type Profile string

// The profiles, as kubectl debug applies them to an ephemeral container.
const (
	// ProfileGeneral adds CAP_SYS_PTRACE (strace, gdb on the target).
	ProfileGeneral Profile = "general"
	// ProfileNetadmin adds CAP_NET_ADMIN and CAP_NET_RAW (tcpdump, ip).
	ProfileNetadmin Profile = "netadmin"
	// ProfileSysadmin makes the container privileged.
	ProfileSysadmin Profile = "sysadmin"
)

// ParseProfile checks a --profile value.
func ParseProfile(s string) (Profile, error) {
	return cmdutil.ParseChoice("--profile", s, "kubectl debug's names", ProfileGeneral, ProfileNetadmin, ProfileSysadmin)
}

// apply sets the profile's privileges on sc.
func (p Profile) apply(sc *runtimeapi.LinuxContainerSecurityContext) {
	switch p {
	case ProfileGeneral:
		sc.Capabilities = &runtimeapi.Capability{AddCapabilities: []string{"SYS_PTRACE"}}
	case ProfileNetadmin:
		sc.Capabilities = &runtimeapi.Capability{AddCapabilities: []string{"NET_ADMIN", "NET_RAW"}}
	case ProfileSysadmin:
		sc.Privileged = true
	}
}

// containerPlan is a debug container ready to be created.
type containerPlan struct {
	image   string
	imageID string
	podID   string
	target  *runtimeapi.Container
	podCfg  *runtimeapi.PodSandboxConfig
	cfg     *runtimeapi.ContainerConfig
	nsPID   int // the target's PID in its PID namespace; 0: unknown
}

// planContainer checks that a debug container can be made for target (the
// image is on the node, the pod is ready) and builds its configuration.
func (rn Runner) planContainer(ctx context.Context, cli *client.Client, target *runtimeapi.Container, r Request) (*containerPlan, error) {
	image, imageID, err := pickImage(ctx, cli, r.Image)
	if err != nil {
		return nil, err
	}
	pod, err := cli.PodStatus(ctx, target.PodSandboxId, false)
	if err != nil {
		return nil, fmt.Errorf("debug container: reading the target's pod: %w", err)
	}
	st := pod.GetStatus()
	if st.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, fmt.Errorf("debug container: the target's pod %s is %s, not ready", client.ShortID(st.GetId()), client.PodStateName(st.GetState()))
	}
	podNS := st.GetLinux().GetNamespaces().GetOptions()
	// The runtime asks for the pod's config again; crisp has only its
	// status, which holds what the runtimes read from it (metadata, labels,
	// namespaces). A privileged debug container needs a pod that allows one
	// (containerd checks this config).
	podCfg := &runtimeapi.PodSandboxConfig{
		Metadata: st.GetMetadata(), Labels: st.GetLabels(), Annotations: st.GetAnnotations(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: podNS, Privileged: r.Profile == ProfileSysadmin,
		}},
	}
	sc := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{
			Network: podNS.GetNetwork(), Ipc: podNS.GetIpc(),
			Pid: runtimeapi.NamespaceMode_TARGET, TargetId: target.Id,
		},
		// The runtime's default seccomp profile, set explicitly:
		// RuntimeDefault is the enum's zero, and a profile left nil is
		// "unconfined" to containerd and CRI-O. Runtimes apply none to a
		// privileged container (--profile sysadmin).
		Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
	}
	r.Profile.apply(sc)
	// LabelOwner is set once the session's lease is taken (runContainer).
	labels := map[string]string{LabelDebug: "1", LabelTarget: target.Id}
	if r.Keep {
		labels[LabelKeep] = "1"
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "crisp-debug-" + client.NameSuffix()},
		Image:    &runtimeapi.ImageSpec{Image: image},
		// The container only holds the namespaces; the command runs in it
		// through Exec, which passes its exit status through and loses no
		// output (an attach could start after the first lines).
		Command: []string{"sleep", "2147483647"},
		Labels:  labels,
		Linux:   &runtimeapi.LinuxContainerConfig{SecurityContext: sc},
	}
	plan := &containerPlan{image: image, imageID: imageID, podID: target.PodSandboxId, target: target, podCfg: podCfg, cfg: cfg}
	// Where crisp runs on the target's node it can tell the command the
	// target's PID (exec'd processes take the container's environment).
	if pid, err := cli.ContainerPID(ctx, target.Id); err == nil {
		if plan.nsPID, _ = namespacePID(pid); plan.nsPID > 0 {
			cfg.Envs = []*runtimeapi.KeyValue{{Key: TargetPIDEnv, Value: []byte(strconv.Itoa(plan.nsPID))}}
		}
	}
	return plan, nil
}

// runContainer creates and starts the debug container, runs the command in
// it, and removes it on every way out unless --keep.
func (rn Runner) runContainer(ctx context.Context, cli *client.Client, plan *containerPlan, r Request) (err error) {
	// The lease is taken before the container exists and released after
	// it is gone: while this crisp runs, no sweep takes its container for
	// a leftover.
	lease, err := rn.Leases.Acquire()
	if err != nil {
		return notStarted{err}
	}
	defer lease.Release(r.Keep)
	plan.cfg.Labels[LabelOwner] = lease.Owner.String()
	if !r.Keep {
		// Also what a cancelled CreateContainer may have created: every
		// container of this crisp goes.
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), client.CleanupTimeout)
			defer cancel()
			if cerr := rn.removeOwn(cctx, cli, lease.Owner); cerr != nil {
				err = errors.Join(err, fmt.Errorf("debug: removing the debug container: %w (crisp debug --cleanup retries)", cerr))
			}
		}()
	}
	// Create and start run to their end even when crisp is interrupted
	// meanwhile: a start cancelled half-way can leave the runtime with a
	// container it will not stop or remove at once (seen on containerd).
	// The interruption is acted on once they are done.
	whole, cancel := context.WithTimeout(context.WithoutCancel(ctx), createStartTimeout)
	defer cancel()
	id, err := cli.CreateContainer(whole, plan.podID, plan.cfg, plan.podCfg)
	if err != nil {
		return notStarted{fmt.Errorf("debug container: %w", err)}
	}
	logTargetPID(rn.Deps, plan.nsPID)
	rn.Deps.Logf("debug: created debug container %s (%s) in pod %s", client.ShortID(id), plan.cfg.Metadata.Name, client.ShortID(plan.podID))
	if err := cli.StartContainer(whole, id); err != nil {
		return notStarted{fmt.Errorf("debug container: %w", err)}
	}
	imageNotice(rn.Deps.Streams.ErrOut, plan.image, plan.imageID)
	if ctx.Err() != nil {
		return cmdutil.NewInterrupted(context.Cause(ctx))
	}
	if r.Keep {
		defer func() {
			_, _ = fmt.Fprintf(rn.Deps.Streams.ErrOut, "crisp: debug container %s kept (--keep); remove it with `crisp rm -f %s` or `crisp debug --cleanup`\n",
				client.ShortID(id), client.ShortID(id)) // the error stream is the last resort: a failed write there has nowhere to go
		}()
	}
	return rn.Deps.Exec(ctx, &session.Exec{
		Container: id, Command: r.Command, Stdin: r.Stdin, TTY: r.TTY, Offers: r.Offers, TLS: r.TLS,
	})
}

// createStartTimeout bounds creating and starting the debug container
// once crisp has been interrupted (they are not cancelled half-way).
const createStartTimeout = 2 * time.Minute

// removeOwn stops and removes every debug container of owner (this crisp).
func (rn Runner) removeOwn(ctx context.Context, cli *client.Client, owner Owner) error {
	ctrs, err := cli.ListContainers(ctx, client.ContainerFilter{All: true, Labels: map[string]string{LabelOwner: owner.String()}})
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range ctrs {
		if c.GetLabels()[LabelDebug] != "1" {
			continue
		}
		if err := rn.remove(ctx, cli, c.Id); err != nil {
			errs = append(errs, err)
			continue
		}
		rn.Deps.Logf("debug: removed debug container %s", client.ShortID(c.Id))
	}
	return errors.Join(errs...)
}

// removeAttempts and removeBackoff bound how long crisp retries a removal
// the runtime refuses for now: containerd refuses to remove a container
// "in starting state" while a StartContainer (of a crisp that was killed
// meanwhile) is still under way.
const (
	removeAttempts = 6
	removeBackoff  = 500 * time.Millisecond
)

// stopBound bounds one stop of a debug container: its init is a sleep,
// killed at once. A stop that takes longer waits on a process that outlived
// the kill (KillStragglers), which crisp then kills itself before it stops
// the container again; once the container is removed crisp looks once more.
const stopBound = 5 * time.Second

// remove stops and removes container id, trying again while the runtime
// refuses.
func (rn Runner) remove(ctx context.Context, cli *client.Client, id string) error {
	var err error
	for attempt := range removeAttempts {
		if attempt > 0 {
			rn.Deps.Logf("debug: removing debug container %s again: %v", client.ShortID(id), err)
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(attempt) * removeBackoff):
			}
		}
		stopCtx, cancel := context.WithTimeout(ctx, stopBound)
		err = cli.StopContainer(stopCtx, id, 0)
		// The runtime enforces the deadline on its own clock: its answer
		// can come a moment before stopCtx's timer fires.
		stopTimedOut := err != nil && client.DeadlineReached(stopCtx, time.Now())
		cancel()
		if stopTimedOut && ctx.Err() == nil {
			// Removing would stop it again and wait as long.
			err = fmt.Errorf("%w (the runtime did not stop it within %s)", err, stopBound)
			rn.killStragglers(id)
			continue
		}
		rerr := cli.RemoveContainer(ctx, id)
		if rerr == nil {
			// The last look: a runtime that does not wait for such a
			// process (it reports the container gone) leaves it running.
			rn.killStragglers(id)
			return nil
		}
		err = errors.Join(err, rerr)
	}
	return err
}

// killStragglers kills the processes left in debug container id and says
// which (on the error stream: a process that outlived its container is
// worth knowing of without -v).
func (rn Runner) killStragglers(id string) {
	kill := rn.Stragglers
	if kill == nil {
		kill = KillStragglers
	}
	killed, err := kill(id)
	for _, s := range killed {
		_, _ = fmt.Fprintf(rn.Deps.Streams.ErrOut, "crisp: debug: killed %s: it outlived the stop of debug container %s\n",
			s, client.ShortID(id)) // the error stream is the last resort: a failed write there has nowhere to go
	}
	if err != nil {
		rn.Deps.Logf("debug: looking for processes left in debug container %s: %v", client.ShortID(id), err)
	}
}

// sweep removes the debug containers whose owner is gone (kept ones too
// when all) and returns how many it removed. An owner is gone only when
// its lock file is here and free (Leases.Check); a container whose owner
// cannot be checked is left alone, and --cleanup (all) names it. self is
// the caller's own lease, never swept.
func (rn Runner) sweep(ctx context.Context, cli *client.Client, all bool, self Owner) (int, error) {
	ctrs, err := cli.ListContainers(ctx, client.ContainerFilter{All: true, Labels: map[string]string{LabelDebug: "1"}})
	if err != nil {
		return 0, err
	}
	type gone struct {
		lease *Lease
		left  bool // a container of this owner stays (kept, or its removal failed)
	}
	owners := map[string]*gone{}
	removed := 0
	var errs []error
	for _, c := range ctrs {
		label := c.GetLabels()[LabelOwner]
		owner, ok := ParseOwner(label)
		if ok && owner == self {
			continue
		}
		g := owners[owner.Token]
		if ok && g == nil {
			live, lease := rn.Leases.Check(owner)
			if live == Alive {
				continue
			}
			if live == Gone {
				g = &gone{lease: lease}
				owners[owner.Token] = g
			}
		}
		if g == nil {
			// Unknown: another host, another lock directory, an older crisp.
			msg := fmt.Sprintf("debug container %s left alone: its owner (%s) cannot be checked here (no lock in %s); if it is gone, remove it with crisp rm -f %s",
				client.ShortID(c.Id), termsafe.Printable(label), rn.Leases.Dir, client.ShortID(c.Id))
			if all {
				_, _ = fmt.Fprintf(rn.Deps.Streams.ErrOut, "crisp: %s\n", msg) // the error stream is the last resort: a failed write there has nowhere to go
			} else {
				rn.Deps.Logf("debug: %s", msg)
			}
			continue
		}
		if c.GetLabels()[LabelKeep] == "1" && !all {
			g.left = true
			continue
		}
		if err := rn.remove(ctx, cli, c.Id); err != nil {
			g.left = true
			errs = append(errs, err)
			continue
		}
		removed++
		rn.Deps.Logf("debug: removed leftover debug container %s (its crisp, %s, is gone)", client.ShortID(c.Id), label)
	}
	for _, g := range owners {
		// The lock file stays while a container still names its owner.
		g.lease.Release(g.left)
	}
	rn.Leases.forgetTemps()
	return removed, errors.Join(errs...)
}

// DefaultImage is the debug container's image when --image is not given:
// one exact reference, never a search among the node's images (a tenant can
// get any name containing "busybox" onto a node). Docker's official busybox
// image, pulled from its registry; pull it once (crisp pull DefaultImage) or
// name another with --image (a digest pins it).
const DefaultImage = "docker.io/library/busybox:1.36"

// pickImage returns the image to run (image, or DefaultImage when empty)
// and its ID, when the node has it.
func pickImage(ctx context.Context, cli *client.Client, image string) (string, string, error) {
	what, how := "", "name another with --image"
	if image == "" {
		image = DefaultImage
		what, how = " (crisp's default debug image)", "name an image the node has with --image"
	}
	st, err := cli.ImageStatus(ctx, image, false)
	if err != nil {
		return "", "", fmt.Errorf("debug container: %w", err)
	}
	if st.GetImage() == nil {
		return "", "", fmt.Errorf("debug container: image %q%s is not on the node; pull it first (crisp pull %s) or %s", image, what, image, how)
	}
	return image, st.GetImage().GetId(), nil
}

// imageNotice says on stderr which image the debug container runs, always:
// what runs beside the target with its privileges is the user's to see.
// The ID comes from the runtime, so both are escaped.
func imageNotice(w io.Writer, ref, id string) {
	_, _ = fmt.Fprintf(w, "crisp: debug container from image %s (%s)\n", termsafe.Printable(ref), termsafe.Printable(id)) // the error stream is the last resort: a failed write there has nowhere to go
}

// notStarted is the error of a debug container the runtime would not
// create or start: nothing ran, so another way may still be tried.
type notStarted struct{ err error }

func (e notStarted) Error() string { return e.err.Error() }
func (e notStarted) Unwrap() error { return e.err }
