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

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/input"
	"github.com/crisp-cri/crisp/internal/transport"
)

// Env is what probe, smoke and bench run with: the runtime client (the
// caller closes it), the streaming URLs it hands out and the streamer.
type Env struct {
	Client   *client.Client
	URLs     URLs
	Streamer Streamer
}

// Dial dials the runtime settings name and builds the streamer with
// tlsCfg. Negotiation details are noise next to the report: they show at
// -vv (verbose 2) on errOut. configure, when set, adjusts the transport
// configuration (crisp's --trace-file).
func Dial(settings client.Settings, tlsCfg *tls.Config, verbose int, errOut io.Writer, configure func(*transport.Config) error) (*Env, error) {
	cfg := transport.NewConfig(transport.ConfigOptions{
		TLS: tlsCfg, UpgradeTimeout: settings.RequestTimeout, Verbose: verbose, LogLevel: 2, Out: errOut,
	})
	if configure != nil {
		if err := configure(&cfg); err != nil {
			return nil, err
		}
	}
	c, err := client.Dial(settings)
	if err != nil {
		return nil, err
	}
	return &Env{Client: c, URLs: CRIURLs{Client: c}, Streamer: TransportStreamer{Config: cfg}}, nil
}

// Resolve turns the container and pod references into a Target; the pod
// defaults to the container's.
func (e *Env) Resolve(ctx context.Context, container, pod string, port int32) (Target, error) {
	ctr, err := e.Client.ResolveContainer(ctx, container)
	if err != nil {
		return Target{}, err
	}
	t := Target{ContainerID: ctr.Id, PodID: ctr.PodSandboxId, Port: port}
	if pod != "" {
		p, err := e.Client.ResolvePod(ctx, pod)
		if err != nil {
			return Target{}, err
		}
		t.PodID = p.Id
	}
	return t, nil
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

// Smoke runs smoker on the container and pod named (resolved here) or,
// with image set, on a pod and container made from image and removed on
// every way out (WithScratch; logf says what it does). The report is nil
// when no check could run.
func (e *Env) Smoke(ctx context.Context, smoker *Smoker, container, pod string, port int32, image string, podCfg *runtimeapi.PodSandboxConfig, logf func(string, ...any)) (rep *SmokeReport, err error) {
	if image == "" {
		t, err := e.Resolve(ctx, container, pod, port)
		if err != nil {
			return nil, err
		}
		return smoker.Run(ctx, t)
	}
	err = WithScratch(ctx, e.Client, image, port, podCfg, logf, func(ctx context.Context, s Scratch) error {
		var err error
		rep, err = smoker.Run(ctx, Target{ContainerID: s.ContainerID, PodID: s.PodID, Port: port})
		return err
	})
	if rep != nil {
		rep.Image = image
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

// Unfinished words why a run stopped before its last check: interrupted,
// or over timeout (smoke's --timeout); other errors are left alone.
func (r *SmokeReport) Unfinished(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("smoke interrupted after %d checks: %w", len(r.Checks), err)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return fmt.Errorf("smoke did not finish within --timeout %s: %w", timeout, err)
	}
	return err
}
