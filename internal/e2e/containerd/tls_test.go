package containerd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"

	"github.com/crisp-cri/crisp/internal/mockruntime/certs"
)

// The TLS harness: one more containerd per runtime (scripts/containerd/tls-up.sh)
// whose streaming server speaks https (enable_tls_streaming with a key pair
// made here with the mock's certs package), on its own folder, bridge and /24
// (runtimeSpec.tls). TestTLS starts it and stops it when its runtime's
// subtest ends (-count=N: N times). CRISP_CTRD_TLS_ENV (containerd 1.6) and
// CRISP_CTRD2_TLS_ENV (2.4) name the env file of a TLS harness somebody else
// started and will stop (made with the certs package, as the subjects
// checked here are its).

// tlsHarness starts the TLS harness of plain's runtime for t and stops it
// when t ends, returning it and its CA file.
func tlsHarness(t *testing.T, plain *Harness) (*Harness, string) {
	t.Helper()
	h, ca, stop, err := startTLSHarness(plain.spec)
	if stop != nil {
		t.Cleanup(stop)
	}
	if err != nil {
		t.Fatalf("TLS harness: %v", err)
	}
	return h, ca
}

func startTLSHarness(spec *runtimeSpec) (h *Harness, ca string, stop func(), err error) {
	if envFile := os.Getenv(spec.tls.envVar); envFile != "" {
		h, err = loadHarness(envFile, spec)
		return h, tlsCAOf(envFile), nil, err
	}
	unlock, err := testkit.LockFile(spec.tls.dir + ".lock")
	if err != nil {
		return nil, "", nil, err
	}
	certDir, err := os.MkdirTemp("", "crisp-e2e-tls-certs-")
	if err != nil {
		unlock()
		return nil, "", nil, err
	}
	if _, err := certs.Generate(certDir, false); err != nil {
		unlock()
		_ = os.RemoveAll(certDir) // best effort: a temporary folder
		return nil, "", nil, fmt.Errorf("generating the streaming key pair: %w", err)
	}
	env := spec.scriptEnv(spec.tls.dir, spec.tls.bridge, spec.tls.netPrefix, "CRISP_CTRD_TLS_DIR="+certDir)
	down := func() {
		if out, err := runScript(env, "containerd/tls-down.sh"); err != nil {
			fmt.Fprintf(os.Stderr, "containerd e2e: scripts/containerd/tls-down.sh failed: %v\n%s", err, out)
		}
		_ = os.RemoveAll(certDir) // best effort: a temporary folder
		unlock()
	}
	start := time.Now()
	if out, err := runScript(env, "containerd/tls-up.sh"); err != nil {
		down()
		return nil, "", nil, fmt.Errorf("scripts/containerd/tls-up.sh failed: %w\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "containerd e2e: %s TLS harness up in %v under %s\n", spec.name, time.Since(start).Round(10*time.Millisecond), spec.tls.dir)
	envFile := filepath.Join(spec.tls.dir, "env")
	h, err = loadHarness(envFile, spec)
	ca = tlsCAOf(envFile)
	if want := filepath.Join(certDir, certs.CAFile); err == nil && ca != want {
		err = fmt.Errorf("%s names the CA %q, not %q", envFile, ca, want)
	}
	return h, ca, down, err
}

func tlsCAOf(envFile string) string {
	data, _ := os.ReadFile(envFile)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CRISP_CTRD_TLS_CA="); ok {
			return v
		}
	}
	return ""
}

// TestTLS runs crisp exec and port-forward through containerd's https
// streaming server with the harness's CA, on every transport, and checks
// that without the CA crisp refuses the certificate saying what to do. One
// subtest per runtime, so each TLS harness lives exactly as long as it.
func TestTLS(t *testing.T) {
	eachRuntime(t, testTLS)
}

func testTLS(t *testing.T, plain *Harness) {
	if !plain.spec.serves.tlsHarness {
		t.Skipf("%s: the suite has no TLS harness for it (runtimeSpec.serves.tlsHarness)", plain.Name)
	}
	h, ca := tlsHarness(t, plain)
	r := []string{"-r", h.Endpoint}

	t.Run("exec", func(t *testing.T) {
		for _, tr := range transports {
			res := h.crisp(t, append(r, "-v", "exec", "--transport", tr, "--tls-ca", ca, h.Ctr, "--", "echo", "over-tls")...)
			if res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "over-tls" {
				t.Fatalf("crisp exec --transport %s --tls-ca over containerd's https streaming: %v", tr, res)
			}
			for _, want := range []string{" at https://127.0.0.1:", `https (TLS 1.3): server certificate "CN=crisp mock streaming server,O=crisp" issued by "CN=crisp mock CA,O=crisp", verified for "127.0.0.1"`} {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("crisp -v exec --transport %s does not say %q: %v", tr, want, res)
				}
			}
			res = h.crisp(t, append(r, "exec", "--transport", tr, "--tls-ca", ca, h.Ctr, "--", "sh", "-c", "exit 7")...)
			if res.ExitCode != 7 {
				t.Errorf("crisp exec --transport %s over TLS: exit code %d, want 7: %v", tr, res.ExitCode, res)
			}
		}
	})

	t.Run("exec-without-CA", func(t *testing.T) {
		for _, tr := range transports {
			res := h.crisp(t, append(r, "exec", "--transport", tr, h.Ctr, "--", "echo", "never")...)
			if res.ExitCode != 125 || res.Stdout != "" {
				t.Fatalf("crisp exec --transport %s without the CA: want exit 125 and no output: %v", tr, res)
			}
			for _, want := range []string{"https://127.0.0.1:", `signed by an unknown authority "CN=crisp mock CA,O=crisp"`, "--tls-ca FILE", "--insecure-skip-tls-verify"} {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("crisp exec --transport %s without the CA does not say %q: %v", tr, want, res)
				}
			}
		}
		res := h.crisp(t, append(r, "exec", "--insecure-skip-tls-verify", h.Ctr, "--", "echo", "insecure")...)
		if res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "insecure" || !strings.Contains(res.Stderr, "warning: --insecure-skip-tls-verify") {
			t.Errorf("crisp exec --insecure-skip-tls-verify: want output and a warning: %v", res)
		}
	})

	t.Run("port-forward", func(t *testing.T) {
		for _, tr := range transports {
			pf := startBackground(t, h.crispCmd(t, t.Context(), append(r, "-v", "port-forward", "--transport", tr, "--tls-ca", ca, h.Pod, fmt.Sprintf(":%d", h.HTTPDPort))...))
			m := pf.WaitFor(t, crispForwardRE, 30*time.Second)
			for i := range 3 {
				body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%s/", m[1]), 10*time.Second)
				if err != nil || !strings.Contains(body, "crisp busybox httpd") {
					t.Fatalf("GET %d through crisp port-forward --transport %s --tls-ca: %v, body %q", i, tr, err, body)
				}
			}
			if !strings.Contains(pf.Output(), "port-forward: https (TLS 1.3): server certificate") {
				t.Errorf("crisp -v port-forward --transport %s does not show the certificate:\n%s", tr, pf.Output())
			}
		}
		res := h.crisp(t, append(r, "port-forward", h.Pod, fmt.Sprintf(":%d", h.HTTPDPort))...)
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, `unknown authority "CN=crisp mock CA,O=crisp"`) || !strings.Contains(res.Stderr, "--tls-ca FILE") {
			t.Errorf("crisp port-forward without the CA: want exit 1 naming the issuer and --tls-ca: %v", res)
		}
	})
}
