package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
)

// tlsOptions is the streaming TLS flag group shared by exec, attach,
// port-forward, probe, smoke and bench. Verification is on unless
// --insecure-skip-tls-verify is given (crictl skips it silently without a
// CA; crisp does not).
type tlsOptions struct {
	CA         string
	Cert       string
	Key        string
	ServerName string
	Insecure   bool
}

func (o *tlsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CA, "tls-ca", "", "CA certificate file to verify the streaming server (default: system roots; config key tls-ca)")
	fs.StringVar(&o.Cert, "tls-cert", "", "client certificate file for streaming mTLS (config key tls-cert)")
	fs.StringVar(&o.Key, "tls-key", "", "client key file for streaming mTLS (config key tls-key)")
	fs.StringVar(&o.ServerName, "tls-server-name", "", "server name to verify instead of the streaming URL's host (config key tls-server-name)")
	fs.BoolVar(&o.Insecure, "insecure-skip-tls-verify", false, "do not verify the streaming server's certificate (insecure; warns)")
}

// merge fills unset flags from the crictl-style config file.
func (o tlsOptions) merge(file client.FileConfig) tlsOptions {
	pick := func(flag, key string) string {
		if flag != "" {
			return flag
		}
		return key
	}
	return tlsOptions{
		CA:         pick(o.CA, file.TLSCA),
		Cert:       pick(o.Cert, file.TLSCert),
		Key:        pick(o.Key, file.TLSKey),
		ServerName: pick(o.ServerName, file.TLSServerName),
		Insecure:   o.Insecure || file.InsecureSkipTLSVerify,
	}
}

// Validate rejects flag combinations that cannot work, before any dialing.
func (o tlsOptions) Validate() error {
	if (o.Cert == "") != (o.Key == "") {
		return usageErrorf("--tls-cert and --tls-key go together (got cert %q, key %q)", o.Cert, o.Key)
	}
	if o.Insecure && o.CA != "" {
		return usageErrorf("--insecure-skip-tls-verify and --tls-ca contradict each other: give one")
	}
	return nil
}

// Config builds the TLS client configuration for streaming URLs, reading the
// config file's keys for what the flags leave unset. It warns on errOut when
// verification is disabled.
func (o tlsOptions) Config(file client.FileConfig, errOut io.Writer) (*tls.Config, error) {
	m := o.merge(file)
	if err := m.Validate(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{ServerName: m.ServerName, MinVersion: tls.VersionTLS12}
	if m.CA != "" {
		pem, err := os.ReadFile(m.CA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", m.CA)
		}
		cfg.RootCAs = pool
	}
	if m.Cert != "" {
		pair, err := tls.LoadX509KeyPair(m.Cert, m.Key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if m.Insecure {
		cfg.InsecureSkipVerify = true
		fmt.Fprintln(errOut, "crisp: warning: --insecure-skip-tls-verify: the streaming server's certificate is not verified")
	}
	return cfg, nil
}
