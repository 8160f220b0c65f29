package streamserver

import (
	"bytes"
	"context"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

func TestQuickCRIStreamingSPDYExec(t *testing.T) {
	srv, _ := startServer(t, Config{Profile: ProfileCRIStreaming})
	u := execURL(t, srv, &runtimeapi.ExecRequest{Cmd: []string{"echo", "hello"}, Stdout: true, Stderr: true})
	ex, err := remotecommand.NewSPDYExecutor(&rest.Config{}, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestQuickCRIStreamingWSExit(t *testing.T) {
	srv, _ := startServer(t, Config{Profile: ProfileCRIStreaming})
	u := execURL(t, srv, &runtimeapi.ExecRequest{Cmd: []string{"exit", "7"}, Stdout: true, Stderr: true})
	ex, err := remotecommand.NewWebSocketExecutorForProtocols(&rest.Config{}, "GET", u.String(), "v5.channel.k8s.io", "v4.channel.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	t.Logf("err %v (%T)", err, err)
}
