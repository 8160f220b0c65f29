package lifecycle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
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
	// Creds is USERNAME[:PASSWORD]; Auth a base64 "USERNAME:PASSWORD";
	// Username asks for the password on Password (stdin).
	Creds, Auth, Username string
	Password              io.Reader
	Prompt                io.Writer
	// Timeout bounds the pull (0: the request timeout only).
	Timeout time.Duration
}

// authConfig builds the registry credentials as crictl does.
func (p Pull) authConfig() (*runtimeapi.AuthConfig, error) {
	if p.Username != "" {
		if p.Prompt != nil {
			_, _ = fmt.Fprint(p.Prompt, "Enter Password:") // a prompt nobody sees changes nothing
		}
		var pw string
		if p.Password != nil {
			line, err := bufio.NewReader(p.Password).ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("reading the registry password: %w", err)
			}
			pw = strings.TrimRight(line, "\r\n")
		}
		if p.Prompt != nil {
			_, _ = fmt.Fprintln(p.Prompt) // as above
		}
		return &runtimeapi.AuthConfig{Username: p.Username, Password: pw}, nil
	}
	if p.Creds != "" && p.Auth != "" {
		return nil, errors.New("both --creds and --auth are given; use one")
	}
	if p.Creds != "" {
		user, pw, _ := strings.Cut(p.Creds, ":")
		if user == "" {
			return nil, errors.New("--creds: the username is empty (want USERNAME[:PASSWORD])")
		}
		return &runtimeapi.AuthConfig{Username: user, Password: pw}, nil
	}
	if p.Auth != "" {
		return &runtimeapi.AuthConfig{Auth: p.Auth}, nil
	}
	return nil, nil
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
	auth, err := p.authConfig()
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
