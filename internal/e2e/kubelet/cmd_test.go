package kubelet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// result is what a command printed and how it exited.
type result struct {
	Stdout, Stderr string
	Code           int
	Took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %v\nstdout:\n%s\nstderr:\n%s", r.Code, r.Took.Round(time.Millisecond), r.Stdout, r.Stderr)
}

// commandTimeout bounds one kubectl or crisp call (rollouts wait inside
// kubectl with their own --timeout, below this).
const commandTimeout = 4 * time.Minute

// runCmd runs name with args and stdin (nil: none); only a failure to run
// it at all fails t.
func runCmd(t *testing.T, stdin io.Reader, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = cleanEnv()
	cmd.Stdin = stdin
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := result{Stdout: out.String(), Stderr: errOut.String(), Took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("running %s %s: %v", name, strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not end within %v: %v", name, strings.Join(args, " "), commandTimeout, r)
	}
	return r
}

// kubectl runs kubectl as the cluster's admin.
func (c *Cluster) kubectl(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	return runCmd(t, stdin, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
}

// mustKubectl is kubectl that fails t unless it exits 0.
func (c *Cluster) mustKubectl(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	r := c.kubectl(t, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), r)
	}
	return r
}

// crisp runs crisp against the kubelet's runtime.
func (c *Cluster) crisp(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	return runCmd(t, stdin, c.CrispBin, append([]string{"--runtime-endpoint", c.CRIEndpoint}, args...)...)
}
