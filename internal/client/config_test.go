package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResolveOrder walks crictl's precedence: flag, CONTAINER_RUNTIME_ENDPOINT,
// config file (-c, then CRI_CONFIG_FILE, then the default file), then the
// first usual socket that exists; each case says which source won.
func TestResolveOrder(t *testing.T) {
	dir := t.TempDir()
	flagCfg := writeFile(t, dir, "flag.yaml", "runtime-endpoint: unix:///from/flag-config.sock\n")
	envCfg := writeFile(t, dir, "env.yaml", "runtime-endpoint: unix:///from/env-config.sock\n")
	defCfg := writeFile(t, dir, "default.yaml", "runtime-endpoint: unix:///from/default-config.sock\n")
	noEndpointCfg := writeFile(t, dir, "empty.yaml", "timeout: 3\n")
	missing := filepath.Join(dir, "missing.yaml")

	usual := []string{"unix:///usual/a.sock", "unix:///usual/b.sock"}
	tests := []struct {
		name         string
		flag         string
		flagConfig   string
		env          map[string]string
		defaultCfg   string
		sockets      []string // which usual sockets exist
		wantEndpoint string
		wantSource   string
		wantErr      string
	}{
		{
			name: "flag beats everything", flag: "unix:///from/flag.sock", flagConfig: flagCfg,
			env:        map[string]string{"CONTAINER_RUNTIME_ENDPOINT": "unix:///from/env.sock", "CRI_CONFIG_FILE": envCfg},
			defaultCfg: defCfg, sockets: []string{"/usual/a.sock"},
			wantEndpoint: "unix:///from/flag.sock", wantSource: SourceFlag,
		},
		{
			name: "environment beats config files", flagConfig: flagCfg,
			env:          map[string]string{"CONTAINER_RUNTIME_ENDPOINT": "unix:///from/env.sock", "CRI_CONFIG_FILE": envCfg},
			defaultCfg:   defCfg,
			wantEndpoint: "unix:///from/env.sock", wantSource: SourceEnv,
		},
		{
			name: "-c beats CRI_CONFIG_FILE", flagConfig: flagCfg,
			env:          map[string]string{"CRI_CONFIG_FILE": envCfg},
			defaultCfg:   defCfg,
			wantEndpoint: "unix:///from/flag-config.sock", wantSource: flagCfg,
		},
		{
			name:         "CRI_CONFIG_FILE beats the default file",
			env:          map[string]string{"CRI_CONFIG_FILE": envCfg},
			defaultCfg:   defCfg,
			wantEndpoint: "unix:///from/env-config.sock", wantSource: envCfg,
		},
		{
			name:       "default file beats the usual sockets",
			defaultCfg: defCfg, sockets: []string{"/usual/a.sock"},
			wantEndpoint: "unix:///from/default-config.sock", wantSource: defCfg,
		},
		{
			name:       "missing default file is fine: first usual socket that exists",
			defaultCfg: missing, sockets: []string{"/usual/b.sock"},
			wantEndpoint: "unix:///usual/b.sock", wantSource: SourceUsualSocket,
		},
		{
			name:       "config without an endpoint falls through to the sockets",
			flagConfig: noEndpointCfg, sockets: []string{"/usual/a.sock", "/usual/b.sock"},
			wantEndpoint: "unix:///usual/a.sock", wantSource: SourceUsualSocket,
		},
		{
			name:       "nothing at all: error names what was tried",
			defaultCfg: missing,
			wantErr:    "none of the usual sockets exists (unix:///usual/a.sock, unix:///usual/b.sock)",
		},
		{
			name: "a config file the user named must exist", flagConfig: missing,
			wantErr: "reading config file",
		},
		{
			name: "CRI_CONFIG_FILE must exist too", env: map[string]string{"CRI_CONFIG_FILE": missing},
			wantErr: "reading config file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := map[string]bool{}
			for _, s := range tt.sockets {
				existing[s] = true
			}
			def := tt.defaultCfg
			if def == "" {
				def = missing
			}
			got, err := Resolve(Sources{
				FlagEndpoint:  tt.flag,
				FlagConfig:    tt.flagConfig,
				Getenv:        func(k string) string { return tt.env[k] },
				DefaultConfig: def,
				Defaults:      usual,
				SocketExists:  func(p string) bool { return existing[p] },
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got.RuntimeEndpoint != tt.wantEndpoint || got.EndpointSource != tt.wantSource {
				t.Errorf("Resolve = %q from %q, want %q from %q", got.RuntimeEndpoint, got.EndpointSource, tt.wantEndpoint, tt.wantSource)
			}
			if got.ImageEndpoint != got.RuntimeEndpoint {
				t.Errorf("image endpoint = %q, want the runtime endpoint %q when unset", got.ImageEndpoint, got.RuntimeEndpoint)
			}
		})
	}
}

// TestConfigFileKeys checks crictl's keys are read as crictl reads them.
func TestConfigFileKeys(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name        string
		yaml        string
		flagTimeout time.Duration
		want        Settings
		wantErr     string
	}{
		{
			name: "every crictl key",
			yaml: "runtime-endpoint: unix:///run/r.sock\nimage-endpoint: unix:///run/i.sock\ntimeout: 3\ndebug: true\npull-image-on-create: false\nmax-retries: 5\n",
			want: Settings{
				RuntimeEndpoint: "unix:///run/r.sock", ImageEndpoint: "unix:///run/i.sock",
				RequestTimeout: 3 * time.Second, Debug: true, MaxRetries: 5,
			},
		},
		{
			name:        "--request-timeout beats the file's timeout",
			yaml:        "runtime-endpoint: unix:///run/r.sock\ntimeout: 3\n",
			flagTimeout: 250 * time.Millisecond,
			want: Settings{
				RuntimeEndpoint: "unix:///run/r.sock", ImageEndpoint: "unix:///run/r.sock",
				RequestTimeout: 250 * time.Millisecond, MaxRetries: DefaultMaxRetries,
			},
		},
		{
			name: "no timeout key: the default",
			yaml: "runtime-endpoint: unix:///run/r.sock\n",
			want: Settings{
				RuntimeEndpoint: "unix:///run/r.sock", ImageEndpoint: "unix:///run/r.sock",
				RequestTimeout: DefaultRequestTimeout, MaxRetries: DefaultMaxRetries,
			},
		},
		{
			name: "streaming TLS keys",
			yaml: "runtime-endpoint: unix:///run/r.sock\ntls-ca: /ca.pem\ninsecure-skip-tls-verify: true\n",
			want: Settings{
				RuntimeEndpoint: "unix:///run/r.sock", ImageEndpoint: "unix:///run/r.sock",
				RequestTimeout: DefaultRequestTimeout, MaxRetries: DefaultMaxRetries,
			},
		},
		{name: "not YAML", yaml: "runtime-endpoint: [unterminated\n", wantErr: "config file"},
		{name: "timeout must be a number", yaml: "timeout: soon\n", wantErr: "config file"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, "c"+string(rune('a'+i))+".yaml", tt.yaml)
			got, err := Resolve(Sources{
				FlagConfig: path, FlagTimeout: tt.flagTimeout,
				Getenv:   func(string) string { return "" },
				Defaults: []string{}, SocketExists: func(string) bool { return false },
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error = %v, want one containing %q and the file's path", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// File and EndpointSource are checked elsewhere.
			got.File, got.EndpointSource = FileConfig{}, ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("IMAGE_SERVICE_ENDPOINT beats image-endpoint", func(t *testing.T) {
		path := writeFile(t, dir, "img.yaml", "runtime-endpoint: unix:///r.sock\nimage-endpoint: unix:///file-images.sock\n")
		env := map[string]string{"IMAGE_SERVICE_ENDPOINT": "unix:///env-images.sock"}
		got, err := Resolve(Sources{FlagConfig: path, Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		if got.ImageEndpoint != "unix:///env-images.sock" || got.RuntimeEndpoint != "unix:///r.sock" {
			t.Errorf("endpoints = %q, %q", got.RuntimeEndpoint, got.ImageEndpoint)
		}
	})
	t.Run("TLS keys reach Settings.File", func(t *testing.T) {
		path := writeFile(t, dir, "tls.yaml", "tls-ca: /ca.pem\ntls-cert: /c.pem\ntls-key: /k.pem\ntls-server-name: node\ninsecure-skip-tls-verify: true\nruntime-endpoint: unix:///r.sock\n")
		got, err := Resolve(Sources{FlagConfig: path, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		want := FileConfig{RuntimeEndpoint: "unix:///r.sock", TLSCA: "/ca.pem", TLSCert: "/c.pem", TLSKey: "/k.pem", TLSServerName: "node", InsecureSkipTLSVerify: true}
		if diff := cmp.Diff(want, got.File); diff != "" {
			t.Errorf("file config (-want +got):\n%s", diff)
		}
	})
}

// FuzzConfigFile feeds arbitrary bytes to the config file reader: it must
// never panic, and whatever it accepts must resolve to settings with a
// positive timeout. Seeds live in testdata/fuzz.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		"runtime-endpoint: unix:///run/containerd/containerd.sock\ntimeout: 2\ndebug: true\n",
		"image-endpoint: tcp://127.0.0.1:1\n",
		"{}",
		"timeout: -5\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Resolve(Sources{
			FlagConfig: path, Getenv: func(string) string { return "" },
			Defaults: []string{"unix:///x.sock"}, SocketExists: func(string) bool { return true },
		})
		if err != nil {
			return
		}
		if s.RequestTimeout <= 0 {
			t.Fatalf("config %q gave timeout %s", data, s.RequestTimeout)
		}
		if s.RuntimeEndpoint == "" || s.ImageEndpoint == "" {
			t.Fatalf("config %q gave endpoints %q, %q", data, s.RuntimeEndpoint, s.ImageEndpoint)
		}
	})
}

// FuzzParseLabels: accepted labels have non-empty keys and round-trip.
func FuzzParseLabels(f *testing.F) {
	f.Add("app=web", "tier=")
	f.Add("=v", "k")
	f.Add("a=b=c", "a=d")
	f.Fuzz(func(t *testing.T, a, b string) {
		labels, err := ParseLabels([]string{a, b})
		if err != nil {
			return
		}
		for k := range labels {
			if k == "" {
				t.Fatalf("ParseLabels(%q, %q) accepted an empty key", a, b)
			}
		}
		k, v, _ := strings.Cut(b, "=")
		if labels[k] != v {
			t.Fatalf("ParseLabels(%q, %q)[%q] = %q, want the last value %q", a, b, k, labels[k], v)
		}
	})
}
