package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/base/input"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// Env is what probe, smoke and bench run with: the runtime client (the
// caller closes it), the streaming URLs it hands out and the streamer.
type Env struct {
	Client   *client.Client
	URLs     URLs
	Streamer Streamer
}

// Dial dials the runtime settings name with dial (the command factory's
// client constructor) and builds the streamer with tlsCfg. Negotiation details are noise next to the report: they show at
// -vv (verbose 2) on errOut. configure, when set, adjusts the transport
// configuration (crisp's --trace-file).
func Dial(dial func(client.Settings) (*client.Client, error), settings client.Settings, tlsCfg *tls.Config, verbose int, errOut io.Writer, configure func(*transport.Config) error) (*Env, error) {
	cfg := transport.NewConfig(transport.ConfigOptions{
		TLS: tlsCfg, UpgradeTimeout: settings.RequestTimeout, Verbose: verbose, LogLevel: 2, Out: errOut,
	})
	if configure != nil {
		if err := configure(&cfg); err != nil {
			return nil, err
		}
	}
	c, err := dial(settings)
	if err != nil {
		return nil, err
	}
	return &Env{Client: c, URLs: CRIURLs{Client: c}, Streamer: TransportStreamer{Config: cfg}}, nil
}

// Resolve turns the container and pod references into a Target; the pod
// defaults to the container's. With a pod, the container is looked up in
// that pod only, so a name that many pods share (a DaemonSet's sidecar, say,
// next to a Job's) names the one in that pod.
func (e *Env) Resolve(ctx context.Context, container, pod string, port int32) (Target, error) {
	if pod == "" {
		ctr, err := e.Client.ResolveContainer(ctx, container)
		if err != nil {
			return Target{}, err
		}
		return Target{ContainerID: ctr.Id, PodID: ctr.PodSandboxId, Port: port}, nil
	}
	p, err := e.Client.ResolvePod(ctx, pod)
	if err != nil {
		return Target{}, err
	}
	ctr, err := e.Client.ResolveContainerIn(ctx, container, p.Id)
	if err != nil {
		return Target{}, err
	}
	return Target{ContainerID: ctr.Id, PodID: p.Id, Port: port}, nil
}

// LoadPodConfig reads a crictl-style PodSandboxConfig (JSON or YAML) for
// smoke --image; its errors name the --pod-config flag.
func LoadPodConfig(ctx context.Context, path string) (*runtimeapi.PodSandboxConfig, error) {
	data, err := input.ReadFile(ctx, path, input.MaxConfig)
	if err != nil {
		return nil, fmt.Errorf("--pod-config: %w", err)
	}
	cfg := &runtimeapi.PodSandboxConfig{}
	if err := yaml.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("--pod-config %s: not a PodSandboxConfig in JSON or YAML: %w", path, err)
	}
	if cfg.GetMetadata().GetName() == "" {
		return nil, fmt.Errorf("--pod-config %s: metadata.name is required", path)
	}
	return cfg, nil
}

// SmokeTarget is what Env.Smoke runs on: a container (and its pod) by
// reference, or, with Image, a scratch pod and container made from it.
type SmokeTarget struct {
	Container, Pod string
	Port           int32
	Image          string
	// PodConfig shapes the scratch pod (nil: a minimal one).
	PodConfig *runtimeapi.PodSandboxConfig
	// KubeletStopped creates the scratch pod even on a runtime that holds a
	// kubelet's pods (the user says no kubelet runs now).
	KubeletStopped bool
	// Logf says what is created and removed.
	Logf func(string, ...any)
}

// Smoke runs smoker on the container and pod named (resolved here) or,
// with an image, on a pod and container made from it and removed on every
// way out (WithScratch). On a runtime a kubelet manages, --image is refused
// before anything is created (*KubeletRuntimeError, with an empty report
// that carries the reason). A target that stops or vanishes under the
// checks ends the run with a *TargetGoneError. The report is nil when no
// check could run.
func (e *Env) Smoke(ctx context.Context, smoker *Smoker, st SmokeTarget) (rep *SmokeReport, err error) {
	started := time.Now()
	if st.Image == "" {
		t, err := e.Resolve(ctx, st.Container, st.Pod, st.Port)
		if err != nil {
			return nil, err
		}
		smoker.Gone = TargetGone(e.Client.Runtime, t, false, started)
		return smoker.Run(ctx, t)
	}
	if !st.KubeletStopped {
		if err := RefuseOnKubelet(ctx, e.Client, e.Client.Endpoint); err != nil {
			return &SmokeReport{Image: st.Image}, err
		}
	}
	setupGone := ScratchSetupGone(e.Client.Runtime, started)
	err = WithScratch(ctx, e.Client, st.Image, st.Port, st.PodConfig, st.Logf, setupGone, func(ctx context.Context, s Scratch) error {
		t := Target{ContainerID: s.ContainerID, PodID: s.PodID, Port: st.Port}
		smoker.Gone = TargetGone(e.Client.Runtime, t, true, started)
		var err error
		rep, err = smoker.Run(ctx, t)
		return err
	})
	if _, gone := errors.AsType[*TargetGoneError](err); gone && rep == nil {
		rep = &SmokeReport{} // no check ran: the report carries why
	}
	if rep != nil {
		rep.Image = st.Image
	}
	return rep, err
}

// WriteSummary writes smoke's closing lines for the table format: the
// warnings, if any, then the tally.
func (r *SmokeReport) WriteSummary(w io.Writer) error {
	if r.Warnings > 0 {
		if _, err := fmt.Fprintf(w, "%d warning(s): defects on transports --transport auto does not pick (--strict fails them)\n", r.Warnings); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Tally())
	return err
}

// Unfinished words why a run (r, nil when no check ran) stopped before its
// last check: interrupted, or over timeout (smoke's --timeout), also while
// --image was still setting up; other errors are left alone.
func (r *SmokeReport) Unfinished(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(err, context.Canceled) {
		checks := 0
		if r != nil {
			checks = len(r.Checks)
		}
		return fmt.Errorf("smoke interrupted after %d checks: %w", checks, err)
	}
	// Whose deadline: smoke's own when it has passed or is about to, even
	// before its timer fires (client.DeadlineReached).
	if errors.Is(err, context.DeadlineExceeded) && client.DeadlineReached(ctx, time.Now()) {
		return fmt.Errorf("smoke did not finish within --timeout %s: %w", timeout, err)
	}
	return err
}
