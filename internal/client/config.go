// Package client owns crisp's side of the CRI gRPC API: where the runtime is
// (endpoint resolution in crictl's order), dialing it with timeouts, turning a
// user's container or pod reference into an ID, and the listing and lifecycle
// calls commands need. It knows nothing of streaming transports or cobra.
package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// DefaultConfigFile is crictl's configuration file, read when neither
// -c/--config nor CRI_CONFIG_FILE names one.
const DefaultConfigFile = "/etc/crictl.yaml"

// DefaultRequestTimeout bounds each gRPC call unless configured otherwise.
const DefaultRequestTimeout = 10 * time.Second

// DefaultEndpoints are tried in order when nothing configures an endpoint,
// as crictl does: containerd, CRI-O, cri-dockerd.
var DefaultEndpoints = []string{
	"unix:///run/containerd/containerd.sock",
	"unix:///run/crio/crio.sock",
	"unix:///var/run/cri-dockerd.sock",
}

// FileConfig is the crictl-compatible YAML configuration file.
type FileConfig struct {
	RuntimeEndpoint string `json:"runtime-endpoint,omitempty"`
	ImageEndpoint   string `json:"image-endpoint,omitempty"`
	// Timeout is in seconds, as crictl writes it.
	Timeout int  `json:"timeout,omitempty"`
	Debug   bool `json:"debug,omitempty"`

	// Streaming TLS, crisp's addition under crictl-style keys.
	TLSCA                 string `json:"tls-ca,omitempty"`
	TLSCert               string `json:"tls-cert,omitempty"`
	TLSKey                string `json:"tls-key,omitempty"`
	TLSServerName         string `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify bool   `json:"insecure-skip-tls-verify,omitempty"`
}

// Where an endpoint came from, as Settings.EndpointSource says it. A config
// file source is the file's path.
const (
	SourceFlag        = "--runtime-endpoint"
	SourceEnv         = "CONTAINER_RUNTIME_ENDPOINT"
	SourceUsualSocket = "default (first usual socket found)"
)

// Settings are what crisp resolved from flags, environment and config file.
type Settings struct {
	RuntimeEndpoint string
	ImageEndpoint   string
	RequestTimeout  time.Duration
	Debug           bool
	// EndpointSource says where RuntimeEndpoint came from, for messages.
	EndpointSource string
	// File is the parsed configuration file (zero when none was read).
	File FileConfig
}

// Sources are the inputs to Resolve. Empty strings mean "not given".
type Sources struct {
	FlagEndpoint  string
	FlagConfig    string
	FlagTimeout   time.Duration // zero when the flag was not set
	Getenv        func(string) string
	DefaultConfig string                 // DefaultConfigFile unless a test overrides it
	Defaults      []string               // DefaultEndpoints unless a test overrides it
	SocketExists  func(path string) bool // nil means os.Stat
}

// Resolve decides the runtime endpoint in crictl's order: the flag,
// CONTAINER_RUNTIME_ENDPOINT, the config file (-c, CRI_CONFIG_FILE or
// /etc/crictl.yaml), then the first usual socket that exists. The image
// endpoint is IMAGE_SERVICE_ENDPOINT, the file's image-endpoint, or the
// runtime endpoint.
func Resolve(src Sources) (Settings, error) {
	getenv := src.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	exists := src.SocketExists
	if exists == nil {
		exists = func(p string) bool { _, err := os.Stat(p); return err == nil }
	}
	s := Settings{RequestTimeout: DefaultRequestTimeout}

	configPath, explicit := src.FlagConfig, src.FlagConfig != ""
	if !explicit {
		if env := getenv("CRI_CONFIG_FILE"); env != "" {
			configPath, explicit = env, true
		} else if src.DefaultConfig != "" {
			configPath = src.DefaultConfig
		} else {
			configPath = DefaultConfigFile
		}
	}
	file, err := readConfigFile(configPath, explicit)
	if err != nil {
		return s, err
	}
	s.File = file
	// crictl's order for the image service: IMAGE_SERVICE_ENDPOINT, the
	// file's image-endpoint, then the runtime endpoint.
	s.ImageEndpoint = file.ImageEndpoint
	if env := getenv("IMAGE_SERVICE_ENDPOINT"); env != "" {
		s.ImageEndpoint = env
	}
	s.Debug = file.Debug
	if file.Timeout > 0 {
		s.RequestTimeout = time.Duration(file.Timeout) * time.Second
	}
	if src.FlagTimeout > 0 {
		s.RequestTimeout = src.FlagTimeout
	}

	switch {
	case src.FlagEndpoint != "":
		s.RuntimeEndpoint, s.EndpointSource = src.FlagEndpoint, SourceFlag
	case getenv("CONTAINER_RUNTIME_ENDPOINT") != "":
		s.RuntimeEndpoint, s.EndpointSource = getenv("CONTAINER_RUNTIME_ENDPOINT"), SourceEnv
	case file.RuntimeEndpoint != "":
		s.RuntimeEndpoint, s.EndpointSource = file.RuntimeEndpoint, configPath
	default:
		defaults := src.Defaults
		if defaults == nil {
			defaults = DefaultEndpoints
		}
		for _, ep := range defaults {
			if exists(strings.TrimPrefix(ep, "unix://")) {
				s.RuntimeEndpoint, s.EndpointSource = ep, SourceUsualSocket
				break
			}
		}
		if s.RuntimeEndpoint == "" {
			return s, fmt.Errorf("no runtime endpoint configured and none of the usual sockets exists (%s); "+
				"give one with -r/--runtime-endpoint, CONTAINER_RUNTIME_ENDPOINT or runtime-endpoint in %s",
				strings.Join(defaults, ", "), DefaultConfigFile)
		}
	}
	if s.ImageEndpoint == "" {
		s.ImageEndpoint = s.RuntimeEndpoint
	}
	return s, nil
}

// readConfigFile parses a crictl YAML config. A missing default file is fine;
// a missing file the user named is an error.
func readConfigFile(path string, explicit bool) (FileConfig, error) {
	var cfg FileConfig
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return cfg, nil
		}
		return cfg, fmt.Errorf("reading config file: %w", err)
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("config file %s: %w", path, err)
	}
	return cfg, nil
}
