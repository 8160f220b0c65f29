package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/crisp-cri/crisp/internal/transport"
)

// Error signatures: the class of an error, what --repeat groups failures
// by and what the explanations switch on. HTTP refusals are "HTTP NNN",
// remote exits "exit N".
const (
	sigNoSocket      = "no socket"
	sigRefused       = "connection refused"
	sigReset         = "connection reset"
	sigEOF           = "EOF"
	sigTimeout       = "timeout"
	sigPermission    = "permission denied"
	sigTLSUnknownCA  = "tls: unknown authority"
	sigTLSHostname   = "tls: wrong host"
	sigTLSClientCert = "tls: client certificate"
	sigTLS           = "tls"
	sigNotRunning    = "not running"
	sigPodNotReady   = "pod not ready"
	sigNotFound      = "not found"
	sigNotReady      = "not ready"
	sigOther         = "error"
)

// signature classifies err: typed errors first (a refusal's status, TLS
// verification, the socket errors), then the words libraries flatten them
// to (gRPC carries a dial failure as text).
func signature(err error) string {
	if err == nil {
		return ""
	}
	var refused *transport.RefusedError
	if errors.As(err, &refused) && refused.Status != 0 {
		return fmt.Sprintf("HTTP %d", refused.Status)
	}
	var ute *transport.UpgradeTimeoutError
	var netErr net.Error
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var verr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		return sigTLSUnknownCA
	case errors.As(err, &host):
		return sigTLSHostname
	case errors.As(err, &verr):
		return sigTLS
	case errors.As(err, &ute), errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return sigTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return sigRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return sigReset
	case isEOF(err):
		return sigEOF
	case errors.Is(err, syscall.ENOENT):
		return sigNoSocket
	case errors.Is(err, syscall.EACCES):
		return sigPermission
	}
	return textSignature(err.Error())
}

// textSignature reads the class from an error's words.
func textSignature(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "signed by unknown authority"):
		return sigTLSUnknownCA
	case strings.Contains(m, "certificate is valid for"), strings.Contains(m, "certificate is not valid for"):
		return sigTLSHostname
	case strings.Contains(m, "client certificate"), strings.Contains(m, "certificate required"), strings.Contains(m, "bad certificate"):
		return sigTLSClientCert
	case strings.Contains(m, "tls:"), strings.Contains(m, "x509:"):
		return sigTLS
	case strings.Contains(m, "connection refused"):
		return sigRefused
	case strings.Contains(m, "connection reset"), strings.Contains(m, "broken pipe"):
		return sigReset
	case strings.Contains(m, "no such file or directory"):
		return sigNoSocket
	case strings.Contains(m, "permission denied"):
		return sigPermission
	case strings.Contains(m, "deadline exceeded"), strings.Contains(m, "timeout"), strings.Contains(m, "timed out"), strings.Contains(m, "did not answer within"):
		return sigTimeout
	case strings.HasSuffix(m, "eof"), strings.Contains(m, "eof;"), strings.Contains(m, "eof)"):
		return sigEOF
	}
	return sigOther
}

// isEOF reports a stream that ended without a word.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
