package cmdutil

import (
	"errors"
	"io"
	"testing"

	"github.com/crisp-cri/crisp/internal/client"
)

// The runtime client comes from the factory's Dial when a test sets one,
// with the settings the flags resolved, so that a test can fake the runtime
// or fail when a command asks for it.
func TestFactoryClientComesFromDial(t *testing.T) {
	refused := errors.New("no runtime in this test")
	var got []client.Settings
	f := &Factory{
		Streams: IOStreams{ErrOut: io.Discard},
		Global:  GlobalOptions{RuntimeEndpoint: "unix:///nonexistent/crisp.sock"},
		Dial: func(s client.Settings) (*client.Client, error) {
			got = append(got, s)
			return nil, refused
		},
	}
	if _, err := f.Client(); !errors.Is(err, refused) {
		t.Errorf("Client: %v, want the fake Dial's error", err)
	}
	if err := f.WithClient(func(*client.Client) error { t.Error("WithClient ran with no client"); return nil }); !errors.Is(err, refused) {
		t.Errorf("WithClient: %v, want the fake Dial's error", err)
	}
	if _, err := f.Dialer()(client.Settings{}); !errors.Is(err, refused) {
		t.Errorf("Dialer: %v, want the fake Dial's error", err)
	}
	if len(got) != 3 || got[0].RuntimeEndpoint != "unix:///nonexistent/crisp.sock" {
		t.Errorf("Dial was asked %+v, want three calls, the first for the --runtime-endpoint", got)
	}
	if (&Factory{}).Dialer() == nil {
		t.Error("a factory without Dial has no dialer; want client.Dial")
	}
}
