package containerd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // only its port was wanted
	return l.Addr().(*net.TCPAddr).Port
}

// httpGet fetches url, retrying connection failures until timeout (a
// forwarder may take a moment to listen); one request may take 10 s, or
// timeout when longer (64 MiB through a forwarder, on a machine busy with
// the other runtimes' tests, take more). Only loopback and the harness's
// pod addresses are ever dialled.
func httpGet(t testing.TB, url string, timeout time.Duration) (string, error) {
	t.Helper()
	client := &http.Client{Timeout: max(timeout, 10*time.Second), Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(url)
		if err == nil {
			body, err := readBody(resp.Body)
			_ = resp.Body.Close() // read to the end already
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("GET %s: %s", url, resp.Status)
			}
			return string(body), err
		}
		if time.Now().After(deadline) {
			return "", err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readBody reads r to its end through a temporary file: io.ReadAll's
// growing copies made 64 MiB through crisp port-forward take 13.6 s under
// -race (0.9 s without), through a file 1.6 s.
func readBody(r io.Reader) ([]byte, error) {
	f, err := os.CreateTemp("", "crisp-e2e-body-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }() // a temporary file: nothing to lose
	_, copyErr := io.Copy(f, r)
	body, err := os.ReadFile(f.Name()) // what came before an error too, for the failure's message
	return body, errors.Join(copyErr, err)
}

// critestLock is a machine-wide lock around critest runs: critest's
// port-forward specs listen on fixed host ports (12001, 12002; 12003 served),
// so two runs of them at once would collide. This suite leaves those specs
// out but holds the lock too, so that a package running them can take it.
const critestLock = "/tmp/crisp-critest.lock"

// holdLock takes path's exclusive flock until the end of the test.
func holdLock(t testing.TB, path string) {
	t.Helper()
	unlock, err := testkit.LockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// pseudoRandom returns n reproducible bytes that do not compress (xorshift).
func pseudoRandom(n int) []byte {
	data := make([]byte, n)
	var x uint64 = 0x9e3779b97f4a7c15
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x >> 32)
	}
	return data
}
