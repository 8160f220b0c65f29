// Package client owns crisp's side of the CRI gRPC API: where the runtime is
// (endpoint resolution in crictl's order), dialing it with timeouts, turning a
// user's container or pod reference into an ID, and the listing and lifecycle
// calls commands need. It knows nothing of streaming transports or cobra.
package client

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/base/input"
)

// DefaultConfigFile is crictl's configuration file, read when neither
// -c/--config nor CRI_CONFIG_FILE names one.
const DefaultConfigFile = "/etc/crictl.yaml"

// DefaultRequestTimeout bounds each gRPC call unless configured otherwise;
// streaming upgrades (transport.DefaultUpgradeTimeout, which the streaming
// layer cannot import from here) and probe's attempts get as long.
const DefaultRequestTimeout = 10 * time.Second

// CleanupTimeout bounds the removal of what a run created (a scratch pod,
// a half-made container, a fleet's pods): it runs on a context of its own,
// after Ctrl-C or the run's timeout too.
const CleanupTimeout = 30 * time.Second

// MaxConfigFileSize bounds what crisp reads of a config file: crictl's files
// are a few lines, and a bound keeps `-c /dev/zero`-like mistakes from eating
// memory.
const MaxConfigFileSize = 1 << 20

// maxTimeoutSeconds is the largest timeout, in seconds, a time.Duration holds.
const maxTimeoutSeconds = math.MaxInt64 / int64(time.Second)

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
	// Timeout is in seconds, as crictl writes it; nil when the key is
	// absent. Zero, negative or too large is an error (crictl silently uses
	// its default instead).
	Timeout *int64 `json:"timeout,omitempty"`
	// Debug raises crisp's verbosity to -v unless -v/--verbose was given,
	// as crictl's debug key stands in for its --debug flag.
	Debug bool `json:"debug,omitempty"`
	// MaxRetries is crictl's max-retries key (--max-retries); nil when absent.
	MaxRetries *int `json:"max-retries,omitempty"`

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
	// Debug is the config file's debug key (see FileConfig.Verbosity).
	Debug bool
	// MaxRetries is how often a call that cannot reach the endpoint is
	// tried again (crictl's --max-retries; negative: until the call's
	// timeout). Zero for a usual socket found by looking, as crictl
	// retries only an endpoint that was set.
	MaxRetries int
	// DebugOut, when set, receives each CRI request and response (-D,
	// --debug, or the config file's debug key), as crictl's debug prints them.
	DebugOut io.Writer
	// EndpointSource says where RuntimeEndpoint came from, for messages.
	EndpointSource string
	// File is the parsed configuration file (zero when none was read).
	File FileConfig
}

// Sources are the inputs to Resolve. Empty strings mean "not given".
type Sources struct {
	FlagEndpoint string
	// FlagImageEndpoint is -i/--image-endpoint: it wins over
	// IMAGE_SERVICE_ENDPOINT and the file.
	FlagImageEndpoint string
	FlagConfig        string
	FlagTimeout       time.Duration // zero when the flag was not set; negative is an error
	FlagMaxRetries    *int          // nil when --max-retries was not given
	Getenv            func(string) string
	DefaultConfig     string                 // DefaultConfigFile unless a test overrides it
	Defaults          []string               // DefaultEndpoints unless a test overrides it
	SocketExists      func(path string) bool // nil means os.Stat
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
	s := Settings{RequestTimeout: DefaultRequestTimeout, MaxRetries: DefaultMaxRetries}
	if src.FlagTimeout < 0 {
		return s, fmt.Errorf("--request-timeout must be positive (e.g. 10s), not %s", src.FlagTimeout)
	}

	file, configPath, err := LoadConfigFile(src)
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
	if src.FlagImageEndpoint != "" {
		s.ImageEndpoint = src.FlagImageEndpoint
	}
	s.Debug = file.Debug
	if file.Timeout != nil {
		// LoadConfigFile checked the range.
		s.RequestTimeout = time.Duration(*file.Timeout) * time.Second
	}
	if src.FlagTimeout > 0 {
		s.RequestTimeout = src.FlagTimeout
	}
	if file.MaxRetries != nil {
		s.MaxRetries = *file.MaxRetries
	}
	if src.FlagMaxRetries != nil {
		s.MaxRetries = *src.FlagMaxRetries
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
				s.RuntimeEndpoint, s.EndpointSource, s.MaxRetries = ep, SourceUsualSocket, 0
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

// LoadConfigFile reads the config file Resolve would read (-c, then
// CRI_CONFIG_FILE, then the default file) and returns it with its path. A
// missing default file gives the zero FileConfig; a file the user named must
// exist.
func LoadConfigFile(src Sources) (FileConfig, string, error) {
	getenv := src.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	path, explicit := src.FlagConfig, src.FlagConfig != ""
	if !explicit {
		if env := getenv("CRI_CONFIG_FILE"); env != "" {
			path, explicit = env, true
		} else if src.DefaultConfig != "" {
			path = src.DefaultConfig
		} else {
			path = DefaultConfigFile
		}
	}
	cfg, err := readConfigFile(path, explicit)
	return cfg, path, err
}

// Verbosity is the verbosity once the file's debug key is applied, as crictl
// applies it to its --debug flag: a -v/--verbose given on the command line
// (flagSet, even --verbose=0) wins; otherwise debug: true means -v.
func (c FileConfig) Verbosity(flag int, flagSet bool) int {
	if !flagSet && c.Debug && flag < 1 {
		return 1
	}
	return flag
}

// readConfigFile parses a crictl YAML config. A missing default file is fine;
// a missing file the user named is an error. Only regular files are read,
// and at most MaxConfigFileSize bytes: a device, a FIFO or a directory is an
// error that says what the path is, never a hang or an endless read.
func readConfigFile(path string, explicit bool) (FileConfig, error) {
	var cfg FileConfig
	if path == os.DevNull {
		return cfg, nil // the usual way to say "no config file": read as empty
	}
	data, err := readRegularFile(path, MaxConfigFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return cfg, nil
		}
		return cfg, fmt.Errorf("reading config file: %w", err)
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("config file %s: %w", path, err)
	}
	if t := cfg.Timeout; t != nil && *t == 0 {
		cfg.Timeout = nil // crictl's "no timeout set" (`crictl config --set timeout=0` writes it): the default
	}
	if t := cfg.Timeout; t != nil && (*t < 0 || *t > maxTimeoutSeconds) {
		return cfg, fmt.Errorf("config file %s: timeout must be a positive number of seconds (at most %d), not %d",
			path, maxTimeoutSeconds, *t)
	}
	return cfg, nil
}

// readRegularFile reads path when it is a regular file of at most max bytes.
// It opens without blocking (a FIFO with no writer would block open(2)) and
// checks what it opened, so a path swapped after a stat cannot slip through.
func readRegularFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, input.FileKind(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes; a crictl config file is a few lines", path, max)
	}
	return data, nil
}
