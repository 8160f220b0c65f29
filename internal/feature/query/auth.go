package query

import (
	"context"
	"errors"
	"fmt"
	"io"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/input"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/podspec"
)

// Credentials are crictl's registry credential flags, the same for pull,
// create and run: --username with the password read from stdin, --creds
// USERNAME[:PASSWORD], or --auth (a base64 "USERNAME:PASSWORD") passed to
// the runtime as given.
type Credentials struct {
	Creds, Auth, Username string
}

// ErrCredsAndAuth is the error of --creds and --auth given together.
var ErrCredsAndAuth = errors.New("--creds and --auth cannot both be given")

// AuthConfig builds a pull's credentials; none gives nil, an anonymous pull.
// The password of --username is the first line of in (a "Password: " prompt
// on prompt, when it is not nil).
// The read is bounded (input.MaxLine) and ends when ctx does.
func (c Credentials) AuthConfig(ctx context.Context, in io.Reader, prompt io.Writer) (*runtimeapi.AuthConfig, error) {
	if c.Creds != "" && c.Auth != "" {
		return nil, ErrCredsAndAuth
	}
	switch {
	case c.Username != "":
		if prompt != nil {
			if _, err := io.WriteString(prompt, "Password: "); err != nil {
				return nil, err
			}
		}
		var line string
		if in != nil {
			var err error
			if line, err = input.ReadLine(ctx, in, "the password of --username (stdin)", input.MaxLine); err != nil {
				return nil, fmt.Errorf("reading the password of --username: %w", err)
			}
		}
		return &runtimeapi.AuthConfig{Username: c.Username, Password: line}, nil
	case c.Creds != "":
		user, pass, err := client.ParseCreds(c.Creds)
		if err != nil {
			return nil, fmt.Errorf("--creds: %w", err)
		}
		return &runtimeapi.AuthConfig{Username: user, Password: pass}, nil
	case c.Auth != "":
		return &runtimeapi.AuthConfig{Auth: c.Auth}, nil
	}
	return nil, nil
}

// LoadPodConfig reads the PodSandboxConfig of pull --pod-config from a JSON
// or YAML file (crictl's snake_case field names, or camelCase); a malformed
// one is named with its line.
func LoadPodConfig(ctx context.Context, path string) (*runtimeapi.PodSandboxConfig, error) {
	data, err := input.ReadFile(ctx, path, input.MaxConfig)
	if err != nil {
		return nil, err
	}
	var cfg runtimeapi.PodSandboxConfig
	if err := podspec.Decode(path, data, &cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}
