package remotecommand

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crisp-cri/crisp/internal/transport"

	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

// newTLSFakeServer is newFakeServer over https (httptest's "Acme Co"
// certificate for 127.0.0.1 and example.com); configure may set the
// server's TLS (client authentication) before it starts.
func newTLSFakeServer(t *testing.T, configure func(*tls.Config)) (*fakeServer, *tls.Config) {
	f := newFakeServer(t, criSPDY, criWS)
	f.srv.Close()
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.ErrorLog = log.New(&bytes.Buffer{}, "", 0) // refused handshakes are the point
	f.srv.StartTLS()
	if configure != nil {
		configure(f.srv.TLS)
	}
	t.Cleanup(f.srv.Close)
	trusted := &tls.Config{RootCAs: f.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	return f, trusted
}

type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

var tlsOffers = []transport.Offer{{Transport: transport.SPDY, Protocols: criSPDY}, {Transport: transport.WebSocket, Protocols: []string{transport.ExecProtocolV4}}}

func TestExecOverTLS(t *testing.T) {
	f, trusted := newTLSFakeServer(t, nil)
	for _, offer := range tlsOffers {
		var out bytes.Buffer
		var logs logLines
		res, err := f.stream([]transport.Offer{offer}, transport.Config{TLS: trusted, Logf: logs.logf}, Streams{Stdout: &out}, "echo", "hi")
		if err != nil || out.String() != "hi\n" {
			t.Fatalf("%s with the CA: %q, %v", offer, out.String(), err)
		}
		att, _ := res.Negotiated()
		if att.TLS == nil || !att.TLS.Verified || !strings.Contains(att.TLS.Issuer, "Acme Co") || att.TLS.ServerName != "127.0.0.1" {
			t.Errorf("%s: TLS record %+v", offer, att.TLS)
		}
		if !strings.Contains(logs.String(), `exec: https (TLS 1.3): server certificate "O=Acme Co" issued by "O=Acme Co", verified for "127.0.0.1"`) {
			t.Errorf("%s: -v does not show the scheme and certificate:\n%s", offer, logs.String())
		}

		out.Reset()
		logs = logLines{}
		_, err = f.stream([]transport.Offer{offer}, transport.Config{TLS: &tls.Config{InsecureSkipVerify: true}, Logf: logs.logf}, Streams{Stdout: &out}, "echo", "hi")
		if err != nil || out.String() != "hi\n" || !strings.Contains(logs.String(), "NOT verified (--insecure-skip-tls-verify)") {
			t.Errorf("%s insecure: %q, %v, log:\n%s", offer, out.String(), err, logs.String())
		}
	}
}

func TestExecTLSFailuresSayWhatToDo(t *testing.T) {
	f, trusted := newTLSFakeServer(t, nil)
	wrongName := trusted.Clone()
	wrongName.ServerName = "wrong.example"
	cases := []struct {
		name string
		cfg  *tls.Config
		want []string
	}{
		{"system roots", nil, []string{f.srv.URL + "/exec/", `unknown authority "O=Acme Co"`, "--tls-ca FILE", "--insecure-skip-tls-verify"}},
		{"wrong server name", wrongName, []string{`not valid for "wrong.example"`, "example.com", "--tls-server-name"}},
	}
	for _, c := range cases {
		for _, offer := range tlsOffers {
			_, err := f.stream([]transport.Offer{offer}, transport.Config{TLS: c.cfg}, Streams{Stdout: &bytes.Buffer{}}, "echo", "hi")
			var refused *transport.RefusedError
			if err == nil || errors.As(err, &refused) {
				t.Errorf("%s %s: got %v, want a TLS failure", c.name, offer, err)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s %s: %q does not mention %q", c.name, offer, err, w)
				}
			}
		}
	}
}

func TestExecTLSClientCertificateRequired(t *testing.T) {
	f, trusted := newTLSFakeServer(t, func(c *tls.Config) { c.ClientAuth = tls.RequireAnyClientCert })
	for _, offer := range tlsOffers {
		_, err := f.stream([]transport.Offer{offer}, transport.Config{TLS: trusted}, Streams{Stdout: &bytes.Buffer{}}, "echo", "hi")
		if err == nil || !strings.Contains(err.Error(), "requires a client certificate") || !strings.Contains(err.Error(), "--tls-cert FILE and --tls-key FILE") {
			t.Errorf("%s without a client certificate: %v", offer, err)
		}
	}
}

func TestPlaintextWarning(t *testing.T) {
	for _, c := range []struct {
		url  string
		warn bool
	}{
		{"http://10.1.2.3:10010/exec/x", true},
		{"http://node.example:10010/exec/x", true},
		{"http://127.0.0.1:10010/exec/x", false},
		{"http://[::1]:10010/exec/x", false},
		{"http://localhost:10010/exec/x", false},
		{"https://10.1.2.3:10010/exec/x", false},
	} {
		var logs, warns logLines
		transport.ReportTLS(transport.Config{Logf: logs.logf, Warnf: warns.logf}, "exec", c.url, nil)
		if got := warns.String() != ""; got != c.warn {
			t.Errorf("%s: warned %v (%q), want %v", c.url, got, warns.String(), c.warn)
		}
		if c.warn && (strings.Count(warns.String(), "\n") != 0 || !strings.Contains(warns.String(), "plaintext http")) {
			t.Errorf("%s: warning is not one line about plaintext: %q", c.url, warns.String())
		}
		if strings.HasPrefix(c.url, "http:") && !strings.Contains(logs.String(), "exec: http: plaintext") {
			t.Errorf("%s: -v does not show the scheme: %q", c.url, logs.String())
		}
	}
}

// TestPortForwardTLSFailures: every port-forward handshake (SPDY, the
// tunnel, the direct WebSocket protocol) explains a certificate it cannot
// verify and a client certificate the server requires.
func TestPortForwardTLSFailures(t *testing.T) {
	f, trusted := newTLSFakeServer(t, nil)
	mtls, mtlsTrusted := newTLSFakeServer(t, func(c *tls.Config) { c.ClientAuth = tls.RequireAnyClientCert })
	offers, err := transport.PortForwardOffers(transport.Auto)
	if err != nil {
		t.Fatal(err)
	}
	wrongName := trusted.Clone()
	wrongName.ServerName = "wrong.example"
	for _, offer := range offers {
		for _, c := range []struct {
			name string
			url  string
			cfg  *tls.Config
			want []string
		}{
			{"no CA", f.srv.URL, nil, []string{f.srv.URL + "/portforward/tok", `unknown authority "O=Acme Co"`, "--tls-ca FILE", "--insecure-skip-tls-verify"}},
			{"wrong name", f.srv.URL, wrongName, []string{`not valid for "wrong.example"`, "--tls-server-name"}},
			{"no client certificate", mtls.srv.URL, mtlsTrusted, []string{"requires a client certificate", "--tls-cert FILE and --tls-key FILE"}},
		} {
			sess, _, err := portforward.Connect(context.Background(), c.url+"/portforward/tok", offer, []uint16{80}, transport.Config{TLS: c.cfg})
			if sess != nil {
				_ = sess.Close() // a test connection: nothing to report
				t.Errorf("%s %s: connected", offer.String(), c.name)
				continue
			}
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%s %s: %v does not mention %q", offer.String(), c.name, err, w)
				}
			}
		}
	}
}

// The caller's own certificate checks still run under crisp's watch, after
// crisp's verification, with the verified chains.
func TestWatchTLSKeepsCallerChecks(t *testing.T) {
	f, trusted := newTLSFakeServer(t, nil)
	pinned := trusted.Clone()
	var chains int
	pinned.VerifyConnection = func(cs tls.ConnectionState) error {
		chains = len(cs.VerifiedChains)
		return errors.New("certificate is not the pinned one")
	}
	_, err := f.stream([]transport.Offer{{Transport: transport.SPDY, Protocols: criSPDY}}, transport.Config{TLS: pinned}, Streams{Stdout: &bytes.Buffer{}}, "echo", "hi")
	if err == nil || !strings.Contains(err.Error(), "not the pinned one") {
		t.Errorf("caller's VerifyConnection ignored: %v", err)
	}
	if chains == 0 {
		t.Error("caller's VerifyConnection saw no verified chains")
	}
}

// helloLog records what each TLS ClientHello a server received asked for.
type helloLog struct {
	mu     sync.Mutex
	hellos []tls.ClientHelloInfo
}

func (h *helloLog) record(c *tls.Config) {
	c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.hellos = append(h.hellos, tls.ClientHelloInfo{ServerName: hello.ServerName, SupportedVersions: slices.Clone(hello.SupportedVersions)})
		return nil, nil
	}
}

// take returns the hellos since the last call.
func (h *helloLog) take() []tls.ClientHelloInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.hellos
	h.hellos = nil
	return out
}

// TestUpgradesDialWithOneTLSPolicy: exec (SPDY, WebSocket, the WebSocket v1
// path) and port-forward (SPDY, the tunnel, the direct protocol) send the
// same SNI (--tls-server-name, else the URL's host) and offer nothing older
// than TLS 1.2, even when the caller's configuration allows TLS 1.0.
func TestUpgradesDialWithOneTLSPolicy(t *testing.T) {
	var hellos helloLog
	f, trusted := newTLSFakeServer(t, hellos.record)
	byName := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1) // an IP is never sent as SNI
	old := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS10}
	named := trusted.Clone()
	named.ServerName, named.MinVersion = "example.com", tls.VersionTLS10 // the certificate's name
	pfOffers, err := transport.PortForwardOffers(transport.Auto)
	if err != nil {
		t.Fatal(err)
	}
	execOffers := append(slices.Clone(tlsOffers), transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.ExecProtocolV1}})
	for _, c := range []struct {
		name    string
		cfg     *tls.Config
		wantSNI string
	}{
		{"the URL's host", old, "localhost"},
		{"--tls-server-name", named, "example.com"},
	} {
		var dialled []string
		for _, offer := range execOffers {
			src := func(ctx context.Context) (string, error) {
				u, err := f.source(Streams{Stdout: &bytes.Buffer{}}, "echo", "hi")(ctx)
				return strings.Replace(u, f.srv.URL, byName, 1), err
			}
			_, _ = Stream(context.Background(), "exec", src, []transport.Offer{offer}, transport.Config{TLS: c.cfg}, Streams{Stdout: &bytes.Buffer{}}) // the handshake is the point
			dialled = append(dialled, "exec "+offer.String())
		}
		for _, offer := range pfOffers {
			if sess, _, _ := portforward.Connect(context.Background(), byName+"/portforward/tok", offer, []uint16{80}, transport.Config{TLS: c.cfg}); sess != nil {
				_ = sess.Close() // only the handshake is the point
			}
			dialled = append(dialled, "port-forward "+offer.String())
		}
		got := hellos.take()
		if len(got) < len(dialled) {
			t.Fatalf("%s: %d ClientHellos for %d dials: %q", c.name, len(got), len(dialled), dialled)
		}
		for i, h := range got {
			if h.ServerName != c.wantSNI {
				t.Errorf("%s: hello %d sent SNI %q, want %q (dials %q)", c.name, i, h.ServerName, c.wantSNI, dialled)
			}
			for _, v := range h.SupportedVersions {
				if v < tls.VersionTLS12 {
					t.Errorf("%s: hello %d offered %s (dials %q)", c.name, i, tls.VersionName(v), dialled)
				}
			}
		}
	}
}
