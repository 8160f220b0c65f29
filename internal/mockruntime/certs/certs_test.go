package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func clientConfig(t *testing.T, dir string, withCert bool) *tls.Config {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA file holds no certificate")
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: ServerName}
	if withCert {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, ClientCertFile), filepath.Join(dir, ClientKeyFile))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// handshake runs one TLS handshake between a server using serverCfg and a
// client using clientCfg, returning the client's error.
func handshake(t *testing.T, serverCfg, clientCfg *tls.Config) error {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", serverCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		_, _ = conn.Write([]byte("ok"))
	}()
	defer func() { <-done }()
	conn, err := tls.Dial("tcp", ln.Addr().String(), clientCfg)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	buf := make([]byte, 2)
	_, err = io.ReadFull(conn, buf)
	return err
}

func TestGenerateServesVerifiableTLS(t *testing.T) {
	dir := t.TempDir()
	serverCfg, err := Generate(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(t, serverCfg, clientConfig(t, dir, false)); err != nil {
		t.Fatalf("client trusting the generated CA failed: %v", err)
	}
	wrongName := clientConfig(t, dir, false)
	wrongName.ServerName = "not-the-mock.example"
	var hostErr x509.HostnameError
	if err := handshake(t, serverCfg, wrongName); !errors.As(err, &hostErr) {
		t.Fatalf("server name mismatch: got %v, want a hostname error", err)
	}
	if err := handshake(t, serverCfg, &tls.Config{ServerName: ServerName}); err == nil {
		t.Fatal("a client without the CA accepted the mock's certificate")
	}
	info, err := os.Stat(filepath.Join(dir, ServerKeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("server key mode: %v %v", info, err)
	}
}

func TestGenerateClientAuth(t *testing.T) {
	dir := t.TempDir()
	serverCfg, err := Generate(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(t, serverCfg, clientConfig(t, dir, true)); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	err = handshake(t, serverCfg, clientConfig(t, dir, false))
	if err == nil {
		t.Fatal("server requiring client certificates accepted a client without one")
	}
	if !strings.Contains(err.Error(), "certificate required") && !strings.Contains(err.Error(), "bad certificate") {
		t.Fatalf("without a client certificate: got %v, want the server's certificate-required alert", err)
	}
}
