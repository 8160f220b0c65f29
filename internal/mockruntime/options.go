package mockruntime

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/certs"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// Options are the settings of a mock runtime served in the foreground (the
// mock-runtime command's flags), as text: Config checks and parses them.
type Options struct {
	Listen     string
	Profile    string
	StreamAddr string
	Faults     []string
	// TLSDir, when set, makes the streaming server speak https with a CA,
	// server and client certificate generated into it; TLSClientAuth
	// requires the client certificate (mTLS).
	TLSDir        string
	TLSClientAuth bool
	// RemoveOrphanPodsAfter: act as a kubelet (Config.RemoveOrphanPodsAfter).
	RemoveOrphanPodsAfter time.Duration
}

// ProfileNames are the streaming profiles' names, full first.
func ProfileNames() []string {
	names := make([]string, len(streamserver.Profiles))
	for i, p := range streamserver.Profiles {
		names[i] = string(p)
	}
	return names
}

// ParseProfile accepts a profile name (case and surrounding blanks ignored).
func ParseProfile(s string) (streamserver.Profile, error) {
	p := streamserver.Profile(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(streamserver.Profiles, p) {
		return "", fmt.Errorf("--profile must be one of %s; got %q", strings.Join(ProfileNames(), ", "), s)
	}
	return p, nil
}

// Config checks o and builds the runtime's configuration (without TLS
// material, which Serve generates). Its errors are about the options, in
// the flags' words: the caller reports them as usage errors.
func (o Options) Config() (Config, error) {
	cfg := Config{Listen: o.Listen, StreamAddr: o.StreamAddr, RemoveOrphanPodsAfter: o.RemoveOrphanPodsAfter}
	if o.RemoveOrphanPodsAfter < 0 {
		return cfg, fmt.Errorf("--remove-orphan-pods-after must not be negative, got %s", o.RemoveOrphanPodsAfter)
	}
	for _, s := range o.Faults {
		fault, err := streamserver.ParseFault(s)
		if err != nil {
			return cfg, fmt.Errorf("--fault: %w", err)
		}
		cfg.Faults = append(cfg.Faults, fault)
	}
	if o.Listen == "" {
		return cfg, fmt.Errorf("--listen is required, e.g. --listen unix:///tmp/crisp-mock.sock")
	}
	if path, ok := strings.CutPrefix(o.Listen, "unix://"); !ok || !filepath.IsAbs(path) {
		return cfg, fmt.Errorf("--listen must be unix:///ABSOLUTE/PATH, got %q", o.Listen)
	}
	if o.TLSClientAuth && o.TLSDir == "" {
		return cfg, fmt.Errorf("--tls-client-auth needs --tls-dir DIR (where the CA and the client certificate are written)")
	}
	if !slices.Contains(streamserver.Profiles, streamserver.Profile(o.Profile)) {
		return cfg, fmt.Errorf("--profile must be one of %s; got %q", strings.Join(ProfileNames(), ", "), o.Profile)
	}
	cfg.Profile = streamserver.Profile(o.Profile)
	host, _, err := net.SplitHostPort(o.StreamAddr)
	if err != nil {
		return cfg, fmt.Errorf("--stream-addr must be HOST:PORT on loopback, e.g. 127.0.0.1:0; got %q", o.StreamAddr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return cfg, fmt.Errorf("--stream-addr must be a loopback address (the mock never listens beyond this host); got %q", o.StreamAddr)
	}
	return cfg, nil
}

// Serve runs the runtime cfg describes (with TLS material generated into
// o.TLSDir when set) until ctx is cancelled, then shuts it down. logf
// receives the mock's diagnostics and where it serves, one call at a time.
func (o Options) Serve(ctx context.Context, cfg Config, logf func(format string, args ...any)) error {
	var logMu sync.Mutex
	cfg.Logf = func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logf(format, args...)
	}
	if o.TLSDir != "" {
		tlsCfg, err := certs.Generate(o.TLSDir, o.TLSClientAuth)
		if err != nil {
			return fmt.Errorf("mock-runtime --tls-dir %s: generating the TLS material: %w", o.TLSDir, err)
		}
		cfg.StreamTLS = tlsCfg
	}
	rt, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	cfg.Logf("serving CRI on %s, profile %s, streaming on %s", rt.Endpoint(), cfg.Profile, rt.StreamServer().Addr())
	if o.TLSDir != "" {
		cert, key := filepath.Join(o.TLSDir, certs.ClientCertFile), filepath.Join(o.TLSDir, certs.ClientKeyFile)
		cfg.Logf("streaming over https: CA %s (crisp --tls-ca)", filepath.Join(o.TLSDir, certs.CAFile))
		if o.TLSClientAuth {
			cfg.Logf("client certificate required (mTLS): --tls-cert %s --tls-key %s", cert, key)
		} else {
			cfg.Logf("client certificate (optional): %s, key %s", cert, key)
		}
	}
	<-ctx.Done()
	return rt.Close()
}
