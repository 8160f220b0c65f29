package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// resolveWithin runs Resolve and fails the test if it has not returned
// within a few seconds: a config file must never block crisp (a FIFO) or
// keep it reading (a device).
func resolveWithin(t *testing.T, src Sources) (Settings, error) {
	t.Helper()
	type result struct {
		s   Settings
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Resolve(src)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("Resolve(%+v) did not return within 5s", src)
		return Settings{}, nil
	}
}

// sources is a Resolve input that depends on nothing on the host except
// the config file named.
func sources(config string, env map[string]string) Sources {
	return Sources{
		FlagConfig: config, Getenv: func(k string) string { return env[k] },
		DefaultConfig: filepath.Join(os.TempDir(), "crisp-no-such-default.yaml"),
		Defaults:      []string{"unix:///usual.sock"}, SocketExists: func(string) bool { return true },
	}
}

// TestConfigFileNotRegular: a config path that is not a regular file is an
// error naming the path and what it is, at once: never an endless read of a
// device or a wait for a FIFO's writer.
func TestConfigFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, what string
	}{
		{"character device", "/dev/zero", "is a character device, not a regular file"},
		{"FIFO", fifo, "is a named pipe (FIFO), not a regular file"},
		{"directory", dir, "is a directory, not a regular file"},
	} {
		for _, how := range []string{"-c", "CRI_CONFIG_FILE", "default"} {
			t.Run(tc.name+" via "+how, func(t *testing.T) {
				src := sources("", nil)
				switch how {
				case "-c":
					src.FlagConfig = tc.path
				case "CRI_CONFIG_FILE":
					src.Getenv = func(k string) string {
						if k == "CRI_CONFIG_FILE" {
							return tc.path
						}
						return ""
					}
				case "default":
					src.DefaultConfig = tc.path
				}
				_, err := resolveWithin(t, src)
				if err == nil || !strings.Contains(err.Error(), tc.path+" "+tc.what) {
					t.Fatalf("Resolve error = %v, want one saying %q %s", err, tc.path, tc.what)
				}
			})
		}
	}
}

// TestConfigFileSizeBound: crisp reads at most MaxConfigFileSize bytes.
func TestConfigFileSizeBound(t *testing.T) {
	dir := t.TempDir()
	line := "# " + strings.Repeat("x", 61) + "\n" // 64 bytes
	body := "runtime-endpoint: unix:///r.sock\n"
	body += strings.Repeat(line, (MaxConfigFileSize-len(body))/len(line))
	atMost := writeFile(t, dir, "big.yaml", body)
	if s, err := resolveWithin(t, sources(atMost, nil)); err != nil || s.RuntimeEndpoint != "unix:///r.sock" {
		t.Fatalf("a %d-byte config: %+v, %v; want it read", len(body), s, err)
	}
	tooBig := writeFile(t, dir, "huge.yaml", body+strings.Repeat(line, 2))
	_, err := resolveWithin(t, sources(tooBig, nil))
	if err == nil || !strings.Contains(err.Error(), tooBig+" is larger than") {
		t.Fatalf("Resolve error = %v, want one saying %s is too large", err, tooBig)
	}
}

// TestConfigFileTimeoutRange: a timeout must be a positive number of
// seconds a time.Duration can hold; 9227000000 s used to overflow to a
// negative duration and a negative one silently became the default. 0 is
// crictl's "not set" (`crictl config --set timeout=0` writes it): the default.
func TestConfigFileTimeoutRange(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		timeout string
		want    time.Duration // zero: an error
	}{
		{"1", time.Second},
		{"9223372036", 9223372036 * time.Second},
		{"0", DefaultRequestTimeout},
		{"-5", 0},
		{"9227000000", 0},
		{"9223372037", 0},
	} {
		t.Run(tc.timeout, func(t *testing.T) {
			path := writeFile(t, dir, "t"+tc.timeout+".yaml", "timeout: "+tc.timeout+"\n")
			s, err := resolveWithin(t, sources(path, nil))
			if tc.want == 0 {
				if err == nil || !strings.Contains(err.Error(), "config file "+path+": timeout must be a positive number of seconds") {
					t.Fatalf("Resolve = %s, %v; want an error naming the file and the key", s.RequestTimeout, err)
				}
				return
			}
			if err != nil || s.RequestTimeout != tc.want {
				t.Fatalf("Resolve = %s, %v; want %s", s.RequestTimeout, err, tc.want)
			}
		})
	}
}

// TestRequestTimeoutFlagNegative: a negative --request-timeout is an error,
// not the default (zero means the flag was not given: the command line
// layer rejects an explicit zero).
func TestRequestTimeoutFlagNegative(t *testing.T) {
	src := sources("", nil)
	src.FlagTimeout = -time.Second
	if _, err := Resolve(src); err == nil || !strings.Contains(err.Error(), "--request-timeout must be positive") {
		t.Fatalf("Resolve error = %v, want one about --request-timeout", err)
	}
}

// TestConfigDebugVerbosity: debug: true stands in for -v, as crictl's debug
// key stands in for --debug; an explicit -v/--verbose wins either way.
func TestConfigDebugVerbosity(t *testing.T) {
	dir := t.TempDir()
	on := writeFile(t, dir, "on.yaml", "debug: true\n")
	off := writeFile(t, dir, "off.yaml", "debug: false\n")
	for _, tc := range []struct {
		name    string
		path    string
		flag    int
		flagSet bool
		want    int
	}{
		{"debug, no -v", on, 0, false, 1},
		{"debug, -vv", on, 2, true, 2},
		{"debug, --verbose=0", on, 0, true, 0},
		{"no debug", off, 0, false, 0},
		{"no debug, -v", off, 1, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, path, err := LoadConfigFile(sources(tc.path, nil))
			if err != nil || path != tc.path {
				t.Fatalf("LoadConfigFile = %q, %v", path, err)
			}
			if got := file.Verbosity(tc.flag, tc.flagSet); got != tc.want {
				t.Errorf("Verbosity(%d, %v) = %d, want %d", tc.flag, tc.flagSet, got, tc.want)
			}
		})
	}
	s, err := Resolve(sources(on, nil))
	if err != nil || !s.Debug {
		t.Errorf("Resolve = %+v, %v; want Debug set", s, err)
	}
}

// TestConfigDevNull: /dev/null, the usual "no config file", reads as an
// empty config rather than an error about a character device.
func TestConfigDevNull(t *testing.T) {
	cfg, err := readConfigFile(os.DevNull, true)
	if err != nil {
		t.Fatalf("readConfigFile(%s): %v", os.DevNull, err)
	}
	if cfg.RuntimeEndpoint != "" || cfg.Timeout != nil {
		t.Fatalf("readConfigFile(%s) = %+v, want an empty config", os.DevNull, cfg)
	}
}
