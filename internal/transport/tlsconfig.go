package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSOptions are the streaming TLS settings: the --tls-* flags that exec,
// attach, port-forward, probe, smoke and bench share, or the matching keys
// of a crictl-style config file. Verification is on unless Insecure is set
// (crictl skips it silently without a CA; crisp does not).
type TLSOptions struct {
	CA         string // CA certificate file; empty means the system roots
	Cert       string // client certificate file, with Key
	Key        string // client key file, with Cert
	ServerName string // name to verify instead of the URL's host
	Insecure   bool   // do not verify the server's certificate
}

// Merge fills what o leaves unset from fallback (a config file's keys).
func (o TLSOptions) Merge(fallback TLSOptions) TLSOptions {
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	return TLSOptions{
		CA:         pick(o.CA, fallback.CA),
		Cert:       pick(o.Cert, fallback.Cert),
		Key:        pick(o.Key, fallback.Key),
		ServerName: pick(o.ServerName, fallback.ServerName),
		Insecure:   o.Insecure || fallback.Insecure,
	}
}

// Validate rejects combinations that cannot work, before any file is read.
func (o TLSOptions) Validate() error {
	if (o.Cert == "") != (o.Key == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together (got cert %q, key %q)", o.Cert, o.Key)
	}
	if o.Insecure && o.CA != "" {
		return errors.New("--insecure-skip-tls-verify and --tls-ca contradict each other: give one")
	}
	return nil
}

// Build makes the TLS client configuration for streaming URLs. warn, when
// set, receives a warning the user must see (verification disabled).
func (o TLSOptions) Build(warn func(msg string)) (*tls.Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{ServerName: o.ServerName, MinVersion: tls.VersionTLS12}
	if o.CA != "" {
		pem, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", o.CA)
		}
		cfg.RootCAs = pool
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if o.Insecure {
		cfg.InsecureSkipVerify = true
		if warn != nil {
			warn("--insecure-skip-tls-verify: the streaming server's certificate is not verified")
		}
	}
	return cfg, nil
}
