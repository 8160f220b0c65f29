package transport

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDescribeTLSError(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	get := func(cfg *tls.Config) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		defer c.CloseIdleConnections()
		resp, err := c.Get(srv.URL)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}

	err := describeTLSError(srv.URL, get(&tls.Config{}))
	for _, want := range []string{srv.URL, "unknown authority", "--tls-ca", "--insecure-skip-tls-verify", "Acme Co"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("unknown CA: error %v does not mention %q", err, want)
		}
	}

	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	err = describeTLSError(srv.URL, get(&tls.Config{RootCAs: pool, ServerName: "wrong.example"}))
	for _, want := range []string{"not valid for \"wrong.example\"", "--tls-server-name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("name mismatch: error %v does not mention %q", err, want)
		}
	}

	if err := get(&tls.Config{RootCAs: pool}); err != nil {
		t.Fatalf("trusted CA: %v", err)
	}
	if got := describeTLSError(srv.URL, nil); got != nil {
		t.Errorf("nil error described as %v", got)
	}
}
