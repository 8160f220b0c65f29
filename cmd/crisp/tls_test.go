package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/certs"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// mockTLS generates the TLS material of `mock start --tls-dir DIR` (relative
// to $WORK) and returns the streaming server's configuration; nil without a
// folder.
func mockTLS(ts *testscript.TestScript, dir string, clientAuth bool) *tls.Config {
	if dir == "" {
		if clientAuth {
			ts.Fatalf("mock start: --tls-client-auth needs --tls-dir DIR")
		}
		return nil
	}
	cfg, err := certs.Generate(ts.MkAbs(dir), clientAuth)
	if err != nil {
		ts.Fatalf("mock start --tls-dir %s: %v", dir, err)
	}
	return cfg
}

// TestTLSFlagsEverywhere checks that every streaming command registers the
// one TLS flag group.
func TestTLSFlagsEverywhere(t *testing.T) {
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	root := newRootCommand(f)
	for _, name := range []string{"exec", "attach", "port-forward", "probe", "smoke", "bench"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd.Name() != name {
			t.Fatalf("command %s not found: %v", name, err)
		}
		for _, flag := range []string{"tls-ca", "tls-cert", "tls-key", "tls-server-name", "insecure-skip-tls-verify"} {
			if cmd.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", name, flag)
			}
		}
	}
}

func TestTLSOptionsMergeAndValidate(t *testing.T) {
	file := client.FileConfig{TLSCA: "/file/ca.crt", TLSCert: "/file/c.crt", TLSKey: "/file/c.key", TLSServerName: "file.example"}
	tests := []struct {
		name    string
		args    []string
		file    client.FileConfig
		want    cmdutil.TLSFlags
		wantErr bool
	}{
		{name: "flags only", args: []string{"--tls-ca", "ca", "--tls-server-name", "n"}, want: cmdutil.TLSFlags{CA: "ca", ServerName: "n"}},
		{name: "file fills what flags leave unset", args: []string{"--tls-ca", "flag-ca"}, file: file,
			want: cmdutil.TLSFlags{CA: "flag-ca", Cert: "/file/c.crt", Key: "/file/c.key", ServerName: "file.example"}},
		{name: "file insecure", file: client.FileConfig{InsecureSkipTLSVerify: true}, want: cmdutil.TLSFlags{Insecure: true}},
		{name: "cert without key", args: []string{"--tls-cert", "c"}, want: cmdutil.TLSFlags{Cert: "c"}, wantErr: true},
		{name: "insecure and CA", args: []string{"--insecure-skip-tls-verify", "--tls-ca", "ca"}, want: cmdutil.TLSFlags{CA: "ca", Insecure: true}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o cmdutil.TLSFlags
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got := o.Merge(tt.file)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("merged options (-want +got):\n%s", diff)
			}
			if err := got.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error: %v", err, tt.wantErr)
			}
		})
	}
}

func TestTLSOptionsConfig(t *testing.T) {
	dir := t.TempDir()
	if _, err := certs.Generate(dir, true); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	o := cmdutil.TLSFlags{
		CA:   filepath.Join(dir, certs.CAFile),
		Cert: filepath.Join(dir, certs.ClientCertFile), Key: filepath.Join(dir, certs.ClientKeyFile),
		ServerName: certs.ServerName,
	}
	cfg, err := o.Config(client.FileConfig{}, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RootCAs == nil || len(cfg.Certificates) != 1 || cfg.ServerName != certs.ServerName || cfg.InsecureSkipVerify {
		t.Errorf("config from flags: %+v", cfg)
	}
	if warn.String() != "" {
		t.Errorf("verified config warned: %q", warn.String())
	}
	cfg, err = cmdutil.TLSFlags{}.Config(client.FileConfig{InsecureSkipTLSVerify: true}, &warn)
	if err != nil || !cfg.InsecureSkipVerify {
		t.Fatalf("insecure from the config file: %+v, %v", cfg, err)
	}
	if warn.String() == "" {
		t.Error("insecure config did not warn")
	}
	if _, err := (cmdutil.TLSFlags{CA: filepath.Join(dir, certs.ServerKeyFile)}).Config(client.FileConfig{}, &warn); err == nil {
		t.Error("a key file as CA was accepted")
	}
}

// mock-runtime --tls-dir serves https with the material it writes, says
// where the CA and the client certificate are, and with --tls-client-auth
// wants the client certificate.
func TestMockRuntimeTLSDir(t *testing.T) {
	var usage bytes.Buffer
	code := Main([]string{"mock-runtime", "--listen", "unix:///tmp/x.sock", "--tls-client-auth"},
		cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &usage, IsTerminalIn: func() bool { return false }})
	if code != cmdutil.ExitUsage || !strings.Contains(usage.String(), "--tls-client-auth needs --tls-dir") {
		t.Errorf("--tls-client-auth without --tls-dir: exit %d, %q", code, usage.String())
	}

	dir := testkit.SocketDir(t)
	tlsDir := filepath.Join(dir, "tls")
	errOut := &syncBuffer{}
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut, IsTerminalIn: func() bool { return false }}}
	o := &mockRuntimeOptions{Options: mockruntime.Options{Listen: "unix://" + filepath.Join(dir, "m.sock"), Profile: "full", StreamAddr: "127.0.0.1:0", TLSDir: tlsDir, TLSClientAuth: true}}
	if err := o.Complete(f, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	}()

	addrRE := regexp.MustCompile(`streaming on (127\.0\.0\.1:\d+)`)
	want := "client certificate required (mTLS): --tls-cert " + filepath.Join(tlsDir, certs.ClientCertFile)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no TLS lines on stderr: %q", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(errOut.String(), "streaming over https: CA "+filepath.Join(tlsDir, certs.CAFile)) {
		t.Errorf("stderr does not name the CA: %q", errOut.String())
	}
	m := addrRE.FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("no streaming address on stderr: %q", errOut.String())
	}
	var to cmdutil.TLSFlags
	to.CA = filepath.Join(tlsDir, certs.CAFile)
	handshake := func(cfg *tls.Config) error {
		conn, err := tls.Dial("tcp", m[1], cfg)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }() // the test is over
		// TLS 1.3 reports a missing client certificate on the first read.
		_, err = conn.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		if err == nil {
			_, err = conn.Read(make([]byte, 1))
		}
		return err
	}
	cfg, err := to.Config(client.FileConfig{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(cfg); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("without a client certificate: %v, want the server's certificate-required alert", err)
	}
	to.Cert, to.Key = filepath.Join(tlsDir, certs.ClientCertFile), filepath.Join(tlsDir, certs.ClientKeyFile)
	if cfg, err = to.Config(client.FileConfig{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := handshake(cfg); err != nil {
		t.Errorf("with the CA and the client certificate: %v", err)
	}
}
