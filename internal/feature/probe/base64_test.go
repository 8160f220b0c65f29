package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"

	"github.com/crisp-cri/crisp/internal/transport"
)

// The base64 framings against the mock's streaming server (k8s.io's
// wsstream, as containerd and CRI-O embed it): data both ways in messages
// larger than one frame of a default gorilla writer, exit codes as status
// (v4) or text (pre-v4), and the terminal size.
func TestBase64FramingOnMock(t *testing.T) {
	env := mocktest.Start(t, mockruntime.Config{})
	pod := env.RunPod(t, "b64")
	ctr := env.RunContainer(t, pod, mocktest.ContainerSpec{Command: []string{"sleep", "3600"}})
	run := func(t *testing.T, p Protocol, req *runtimeapi.ExecRequest, s Session) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req.ContainerId = ctr
		resp, err := env.CRI.Exec(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := TransportStreamer{}.Stream(ctx, resp.Url, p, s)
		if !hs.Accepted || hs.Negotiated != p.Name {
			t.Fatalf("%s not accepted: %+v %v", p, hs, err)
		}
		return err
	}
	for _, name := range []string{transport.ExecProtocolBase64, transport.ExecProtocolV4Base64} {
		p := Protocol{Transport: transport.WebSocket, Name: name}
		t.Run(name, func(t *testing.T) {
			data := make([]byte, 300<<10)
			rand.Read(data)
			var out bytes.Buffer
			err := run(t, p, &runtimeapi.ExecRequest{Cmd: []string{"head", "-c", fmt.Sprint(len(data))}, Stdin: true, Stdout: true, Stderr: true},
				Session{Stdin: bytes.NewReader(data), Stdout: &out, Stderr: &out})
			if err != nil || !bytes.Equal(out.Bytes(), data) {
				t.Errorf("300 KiB through head -c: got %d bytes, equal %t, error %v", out.Len(), bytes.Equal(out.Bytes(), data), err)
			}

			err = run(t, p, &runtimeapi.ExecRequest{Cmd: []string{"sh", "-c", "exit 7"}, Stdout: true, Stderr: true}, Session{Stdout: &out, Stderr: &out})
			if code, ok := exitStatus(err); !ok || code != 7 {
				t.Errorf("exit 7: got %v", err)
			}

			tc := newTTYCheck()
			err = run(t, p, &runtimeapi.ExecRequest{Cmd: tc.command(), Tty: true, Stdout: true}, tc.session())
			if outcome, detail := tc.verdict(p, err); outcome != Pass {
				t.Errorf("terminal size and resize: %s: %s", outcome, detail)
			}
		})
	}
}
