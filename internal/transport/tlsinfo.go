package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
)

// TLSInfo is what the TLS handshake with a streaming server showed: the
// negotiated version and the server certificate. Attempt.TLS is nil for a
// plaintext (http) URL.
type TLSInfo struct {
	// Version is the TLS version, e.g. "TLS 1.3".
	Version string
	// Subject and Issuer are the server certificate's.
	Subject string
	Issuer  string
	// ServerName is the name the certificate was verified for: the URL's
	// host, or --tls-server-name.
	ServerName string
	// Verified is false when verification was skipped
	// (--insecure-skip-tls-verify).
	Verified bool
	// ClientCert reports that the server asked for a client certificate
	// and crisp sent one (mTLS).
	ClientCert bool
}

// TLSWatch observes the TLS handshakes of one attempt: it verifies the
// server's certificate itself (as crypto/tls would) so that a failure keeps
// its type and the certificate's issuer even where a library flattens the
// error to text (client-go's SPDY executor does), and it notes whether the
// server asked for a client certificate.
type TLSWatch struct {
	url        string
	serverName string

	mu        sync.Mutex
	info      *TLSInfo
	verifyErr error
	asked     bool // the server sent a CertificateRequest
	sent      bool // and crisp answered with a certificate
}

// WatchTLS returns cfg with a TLS configuration that records every handshake
// with rawURL's host in the returned watch. Verification stays exactly as
// strict as cfg.TLS asks (on, unless InsecureSkipVerify).
func WatchTLS(cfg Config, rawURL string) (Config, *TLSWatch) {
	w := &TLSWatch{url: rawURL}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "wss") {
		return cfg, w
	}
	base := UpgradeTLS(cfg.TLS, u.Hostname()) // spdyupgrade.go: SNI, TLS 1.2 at least
	w.serverName = base.ServerName
	c := base.Clone()
	// crisp verifies in VerifyConnection (below), with the same roots and
	// name crypto/tls would use; the dialers skip their own hostname check.
	c.InsecureSkipVerify = true
	c.VerifyPeerCertificate = nil
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		chains, err := w.verify(base, cs)
		if err != nil {
			return err
		}
		// The caller's own checks, as crypto/tls would run them.
		cs.VerifiedChains = chains
		if base.VerifyPeerCertificate != nil {
			var raw [][]byte
			for _, cert := range cs.PeerCertificates {
				raw = append(raw, cert.Raw)
			}
			if err := base.VerifyPeerCertificate(raw, chains); err != nil {
				return err
			}
		}
		if base.VerifyConnection != nil {
			return base.VerifyConnection(cs)
		}
		return nil
	}
	c.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		cert, err := clientCertificate(base, cri)
		w.mu.Lock()
		w.asked = true
		w.sent = err == nil && cert != nil && len(cert.Certificate) > 0
		w.mu.Unlock()
		return cert, err
	}
	cfg.TLS = c
	return cfg, w
}

// clientCertificate picks the client certificate as crypto/tls does.
func clientCertificate(base *tls.Config, cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if base.GetClientCertificate != nil {
		return base.GetClientCertificate(cri)
	}
	for i := range base.Certificates {
		if cri.SupportsCertificate(&base.Certificates[i]) == nil {
			return &base.Certificates[i], nil
		}
	}
	return &tls.Certificate{}, nil
}

// verify checks the server's chain against base's roots (the system's when
// nil) for w.serverName, unless base skips verification, and records the
// outcome and the verified chains.
func (w *TLSWatch) verify(base *tls.Config, cs tls.ConnectionState) ([][]*x509.Certificate, error) {
	if len(cs.PeerCertificates) == 0 {
		return nil, errors.New("tls: the streaming server sent no certificate")
	}
	leaf := cs.PeerCertificates[0]
	info := &TLSInfo{
		Version:    tls.VersionName(cs.Version),
		Subject:    leaf.Subject.String(),
		Issuer:     leaf.Issuer.String(),
		ServerName: w.serverName,
	}
	var chains [][]*x509.Certificate
	if !base.InsecureSkipVerify {
		opts := x509.VerifyOptions{
			Roots:         base.RootCAs,
			DNSName:       w.serverName,
			Intermediates: x509.NewCertPool(),
		}
		if base.Time != nil {
			opts.CurrentTime = base.Time()
		}
		for _, cert := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(cert)
		}
		var err error
		if chains, err = leaf.Verify(opts); err != nil {
			verr := &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
			w.mu.Lock()
			w.verifyErr = verr
			w.mu.Unlock()
			return nil, verr
		}
		info.Verified = true
	}
	w.mu.Lock()
	w.info = info
	w.mu.Unlock()
	return chains, nil
}

// result is what the watch saw: the handshake's record (nil for plaintext
// or before a handshake completed).
func (w *TLSWatch) Result() *TLSInfo {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.info == nil {
		return nil
	}
	info := *w.info
	info.ClientCert = w.asked && w.sent
	return &info
}

// describe explains a failed attempt whose cause may be TLS: the
// certificate verification crisp did (with its issuer, whatever the error
// text became), a client certificate the server wanted and did not get or
// refused, or describeTLSError's reading of err. Other errors come back
// unchanged.
func (w *TLSWatch) Describe(err error) error {
	if err == nil || w == nil {
		return err
	}
	w.mu.Lock()
	verr, asked, sent := w.verifyErr, w.asked, w.sent
	w.mu.Unlock()
	alert := strings.Contains(err.Error(), "remote error: tls:")
	switch {
	case verr != nil:
		return describeTLSError(w.url, verr)
	case asked && !sent && alert:
		return fmt.Errorf("%s: the streaming server requires a client certificate (mTLS) and crisp had none to send; "+
			"pass --tls-cert FILE and --tls-key FILE (a certificate signed by a CA the runtime trusts): %w", w.url, err)
	case asked && sent && alert:
		return fmt.Errorf("%s: the streaming server refused crisp's client certificate (mTLS); "+
			"check that --tls-cert FILE is signed by a CA the runtime trusts and that --tls-key FILE is its key: %w", w.url, err)
	}
	return describeTLSError(w.url, err)
}

// ReportTLS tells the user, once per negotiated session, how its URL is
// secured: with -v the scheme and the server certificate; whatever the
// verbosity, a warning when a plaintext URL leaves this host.
func ReportTLS(cfg Config, op, rawURL string, info *TLSInfo) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	if info != nil {
		verified := fmt.Sprintf("verified for %q", info.ServerName)
		if !info.Verified {
			verified = "NOT verified (--insecure-skip-tls-verify)"
		}
		client := ""
		if info.ClientCert {
			client = ", client certificate sent (mTLS)"
		}
		cfg.Log("%s: %s (%s): server certificate %q issued by %q, %s%s",
			op, u.Scheme, info.Version, info.Subject, info.Issuer, verified, client)
		return
	}
	if u.Scheme != "http" && u.Scheme != "ws" {
		return
	}
	cfg.Log("%s: %s: plaintext, no TLS", op, u.Scheme)
	if !isLoopbackHost(u.Hostname()) {
		cfg.Warn("%s: the streaming URL is plaintext %s to %s, which is not this host: the session and its token cross the network unencrypted; "+
			"enable TLS streaming in the runtime (containerd: enable_tls_streaming; CRI-O: stream_enable_tls)", op, u.Scheme, u.Host)
	}
}

// isLoopbackHost reports whether host (no port) names this machine's
// loopback interface.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
