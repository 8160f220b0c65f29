package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// describeTLSError turns a failed TLS handshake with a streaming URL into an
// error that names the URL, what the certificate says, and the ways out. It
// returns err unchanged when err is not a TLS verification failure.
func describeTLSError(url string, err error) error {
	if err == nil {
		return nil
	}
	var verr *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &host):
		return fmt.Errorf("%s: the streaming server's certificate is not valid for %q (it names %s); "+
			"pass the name it has with --tls-server-name, or fix the runtime's certificate: %w",
			url, host.Host, certNames(host.Certificate), err)
	case errors.As(err, &unknown):
		return fmt.Errorf("%s: the streaming server's certificate (subject %q) is signed by an unknown authority %q; "+
			"pass the runtime's CA with --tls-ca FILE, or --insecure-skip-tls-verify to skip verification (insecure): %w",
			url, subject(unknown.Cert), issuer(unknown.Cert), err)
	case errors.As(err, &invalid):
		return fmt.Errorf("%s: the streaming server's certificate is invalid (%s); fix the runtime's certificate, "+
			"or --insecure-skip-tls-verify to skip verification (insecure): %w", url, invalid.Detail, err)
	case errors.As(err, &verr):
		return fmt.Errorf("%s: TLS verification failed; pass the runtime's CA with --tls-ca FILE, "+
			"or --insecure-skip-tls-verify (insecure): %w", url, err)
	}
	// Some layers flatten the error to text; recognise the common cases.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "certificate signed by unknown authority"):
		return fmt.Errorf("%s: the streaming server's certificate is signed by an unknown authority; "+
			"pass the runtime's CA with --tls-ca FILE, or --insecure-skip-tls-verify to skip verification (insecure): %w", url, err)
	case strings.Contains(msg, "certificate required"), strings.Contains(msg, "bad certificate"):
		return fmt.Errorf("%s: the streaming server requires a client certificate (mTLS); "+
			"pass --tls-cert FILE and --tls-key FILE: %w", url, err)
	case strings.Contains(msg, "certificate is valid for"):
		return fmt.Errorf("%s: the streaming server's certificate does not match the host; "+
			"pass the name it has with --tls-server-name: %w", url, err)
	}
	return err
}

func subject(c *x509.Certificate) string {
	if c == nil {
		return "unknown"
	}
	return c.Subject.String()
}

func issuer(c *x509.Certificate) string {
	if c == nil {
		return "unknown"
	}
	return c.Issuer.String()
}

func certNames(c *x509.Certificate) string {
	if c == nil {
		return "no names"
	}
	var names []string
	names = append(names, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return "no names"
	}
	return strings.Join(names, ", ")
}

// DescribeTLSError explains a failed TLS handshake with the streaming URL
// url as crisp's own dialers do (the URL, the certificate's subject and
// issuer, the ways out), for dialers outside this package (probe's raw
// WebSocket client); other errors come back unchanged.
func DescribeTLSError(url string, err error) error { return describeTLSError(url, err) }
