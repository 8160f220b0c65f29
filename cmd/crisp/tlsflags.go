package main

import (
	"crypto/tls"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// tlsOptions binds the streaming TLS flag group shared by exec, attach,
// port-forward, probe, smoke and bench to transport.TLSOptions (same
// fields), which builds the configuration.
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
	return tlsOptions(transport.TLSOptions(o).Merge(transport.TLSOptions{
		CA: file.TLSCA, Cert: file.TLSCert, Key: file.TLSKey, ServerName: file.TLSServerName, Insecure: file.InsecureSkipTLSVerify,
	}))
}

// Validate rejects flag combinations that cannot work, before any dialing.
func (o tlsOptions) Validate() error {
	if err := transport.TLSOptions(o).Validate(); err != nil {
		return usageErrorf("%s", err)
	}
	return nil
}

// Config builds the TLS client configuration for streaming URLs
// (transport.TLSOptions.Build), reading the config file's keys for what the
// flags leave unset. It warns on errOut when verification is disabled.
func (o tlsOptions) Config(file client.FileConfig, errOut io.Writer) (*tls.Config, error) {
	m := o.merge(file)
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return transport.TLSOptions(m).Build(func(msg string) { fmt.Fprintln(errOut, "crisp: warning: "+msg) })
}
