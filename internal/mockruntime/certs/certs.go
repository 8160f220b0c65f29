// Package certs generates the mock runtime's TLS material: a CA, a server
// certificate for the loopback streaming server and a client certificate for
// mTLS, written as PEM files so crisp (and curl, crictl) can be pointed at
// them. Only crypto/x509: tests need no external tools.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// File names written into the directory.
const (
	CAFile         = "ca.crt"
	ServerCertFile = "server.crt"
	ServerKeyFile  = "server.key"
	ClientCertFile = "client.crt"
	ClientKeyFile  = "client.key"
)

// ServerName is the DNS name in the server certificate besides the loopback
// addresses; tests use it to check --tls-server-name.
const ServerName = "crisp-mock.localhost"

// Generate writes a fresh CA, server and client key pair into dir (created
// if missing, files mode 0600 for keys) and returns the server's TLS config.
// With clientAuth the server requires a client certificate signed by the CA.
func Generate(dir string, clientAuth bool) (*tls.Config, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tls dir: %w", err)
	}
	caKey, caCert, caDER, err := newCA()
	if err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, CAFile), "CERTIFICATE", caDER, 0o644); err != nil {
		return nil, err
	}
	serverTmpl := leafTemplate("crisp mock streaming server", x509.ExtKeyUsageServerAuth)
	serverTmpl.DNSNames = []string{ServerName, "localhost"}
	serverTmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	serverPair, err := issue(dir, ServerCertFile, ServerKeyFile, serverTmpl, caCert, caKey)
	if err != nil {
		return nil, err
	}
	if _, err := issue(dir, ClientCertFile, ClientKeyFile, leafTemplate("crisp client", x509.ExtKeyUsageClientAuth), caCert, caKey); err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{serverPair}, MinVersion: tls.VersionTLS12}
	if clientAuth {
		pool := x509.NewCertPool()
		pool.AddCert(caCert)
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

func newCA() (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "crisp mock CA", Organization: []string{"crisp"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, der, err
}

func leafTemplate(cn string, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"crisp"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
}

// issue signs tmpl with the CA and writes the certificate and key files.
func issue(dir, certName, keyName string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPath, keyPath := filepath.Join(dir, certName), filepath.Join(dir, keyName)
	if err := errors.Join(
		writePEM(certPath, "CERTIFICATE", der, 0o644),
		writePEM(keyPath, "EC PRIVATE KEY", keyDER, 0o600),
	); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certPath, keyPath)
}

func writePEM(path, blockType string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
