package query

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/client"
)

// PullAuth builds a pull's credentials from crictl's flags: --username with
// the password read from in (a prompt on errOut), --creds
// USERNAME[:PASSWORD], or --auth passed to the runtime as given. None gives
// nil: an anonymous pull.
func PullAuth(creds, auth, username string, in io.Reader, errOut io.Writer) (*runtimeapi.AuthConfig, error) {
	switch {
	case username != "":
		if _, err := io.WriteString(errOut, "Password: "); err != nil {
			return nil, err
		}
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading the password of --username: %w", err)
		}
		return &runtimeapi.AuthConfig{Username: username, Password: strings.TrimRight(line, "\r\n")}, nil
	case creds != "":
		user, pass, err := client.ParseCreds(creds)
		if err != nil {
			return nil, fmt.Errorf("--creds: %w", err)
		}
		return &runtimeapi.AuthConfig{Username: user, Password: pass}, nil
	case auth != "":
		return &runtimeapi.AuthConfig{Auth: auth}, nil
	}
	return nil, nil
}

// LoadPodConfig reads a PodSandboxConfig from a JSON or YAML file (field
// names in snake_case as crictl writes them, or camelCase).
func LoadPodConfig(path string) (*runtimeapi.PodSandboxConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var cfg runtimeapi.PodSandboxConfig
	if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(js, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &cfg, nil
}
