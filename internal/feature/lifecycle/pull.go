package lifecycle

import (
	"context"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// PullPolicy says when create and run pull the container's image.
type PullPolicy int

const (
	// PullNever uses the image the runtime has (create's default).
	PullNever PullPolicy = iota
	// PullIfMissing pulls only an image the runtime lacks (run's default).
	PullIfMissing
	// PullAlways pulls even a present image (--with-pull).
	PullAlways
)

// Pull are the image pull flags create and run share with crictl.
type Pull struct {
	Policy PullPolicy
	// Credentials are the registry's, crictl's flags (pull's too).
	query.Credentials
	// Password is where the password of Username is read (stdin); Prompt
	// asks for it.
	Password io.Reader
	Prompt   io.Writer
	// Timeout bounds the pull (0: the request timeout only).
	Timeout time.Duration
}

// ensureImage pulls the container's image (and the images it mounts) as
// the policy says.
func ensureImage(ctx context.Context, c *client.Client, cfg *runtimeapi.ContainerConfig, podCfg *runtimeapi.PodSandboxConfig, p Pull, notices io.Writer) error {
	if p.Policy == PullNever {
		return nil
	}
	images := []string{cfg.GetImage().GetImage()}
	for _, m := range cfg.GetMounts() {
		if img := m.GetImage().GetImage(); img != "" {
			images = append(images, img)
		}
	}
	auth, err := p.AuthConfig(ctx, p.Password, p.Prompt)
	if err != nil {
		return err
	}
	for _, img := range images {
		if p.Policy == PullIfMissing {
			st, err := c.ImageStatus(ctx, img, false)
			if err != nil {
				return err
			}
			if st.GetImage() != nil {
				continue
			}
		}
		pctx := ctx
		if p.Timeout > 0 {
			var cancel context.CancelFunc
			pctx, cancel = context.WithTimeout(ctx, p.Timeout)
			defer cancel()
		}
		ref, err := c.PullImageWith(pctx, img, auth, podCfg)
		if err != nil {
			return err
		}
		notice(notices, "pulled image %s (%s)", img, ref)
	}
	return nil
}
