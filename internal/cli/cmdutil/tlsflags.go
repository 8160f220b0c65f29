package cmdutil

import (
	"crypto/tls"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// TLSFlags binds the streaming TLS flag group shared by exec, attach,
// port-forward, probe, smoke and bench to transport.TLSOptions (same
// fields), which builds the configuration.
type TLSFlags struct {
	CA         string
	Cert       string
	Key        string
	ServerName string
	Insecure   bool
}

// AddFlags binds the group to fs.
func (o *TLSFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CA, "tls-ca", "", "CA certificate file to verify the streaming server (default: system roots; config key tls-ca)")
	fs.StringVar(&o.Cert, "tls-cert", "", "client certificate file for streaming mTLS (config key tls-cert)")
	fs.StringVar(&o.Key, "tls-key", "", "client key file for streaming mTLS (config key tls-key)")
	fs.StringVar(&o.ServerName, "tls-server-name", "", "server name to verify instead of the streaming URL's host (config key tls-server-name); also --tls-sni")
	Alias(fs, "tls-sni", "tls-server-name")
	fs.BoolVar(&o.Insecure, "insecure-skip-tls-verify", false, "do not verify the streaming server's certificate (insecure; warns)")
}

// Merge fills unset flags from the crictl-style config file.
func (o TLSFlags) Merge(file client.FileConfig) TLSFlags {
	return TLSFlags(transport.TLSOptions(o).Merge(transport.TLSOptions{
		CA: file.TLSCA, Cert: file.TLSCert, Key: file.TLSKey, ServerName: file.TLSServerName, Insecure: file.InsecureSkipTLSVerify,
	}))
}

// Validate rejects flag combinations that cannot work, before any dialing.
func (o TLSFlags) Validate() error {
	if err := transport.TLSOptions(o).Validate(); err != nil {
		return UsageError{Err: err}
	}
	return nil
}

// Config builds the TLS client configuration for streaming URLs
// (transport.TLSOptions.Build), reading the config file's keys for what the
// flags leave unset. It warns on errOut when verification is disabled.
func (o TLSFlags) Config(file client.FileConfig, errOut io.Writer) (*tls.Config, error) {
	m := o.Merge(file)
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return transport.TLSOptions(m).Build(func(msg string) {
		_, _ = fmt.Fprintln(errOut, "crisp: warning: "+msg) // the error stream is the last resort: a failed write there has nowhere to go
	})
}
