package spdyconn

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// A stream opened on spdystream's connection as it is lost (the runtime's
// streaming server went away between crisp's check and its SYN_STREAM)
// fails, and closing the connection afterwards leaves no goroutine behind.
// spdystream adds such a stream to its table after the table was emptied
// for the lost connection; unless it is reset, Close's shutdown waits for
// it for good.
func TestSpdystreamStreamOnLostConnection(t *testing.T) {
	before := goleak.IgnoreCurrent()
	client, server := net.Pipe()
	go func() { _, _ = io.Copy(io.Discard, server) }()
	c, err := Open(client, nil, Options{Kind: KindSpdystream, CreateTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = server.Close() // the server goes away
	select {
	case <-c.CloseChan():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not notice its peer's close")
	}
	// spdystream empties its stream table a moment after CloseChan: open
	// streams until well after that (each one must fail).
	deadline := time.Now().Add(500 * time.Millisecond)
	for n := 0; n < 3 || time.Now().Before(deadline); n++ {
		if s, err := c.CreateStream(http.Header{}); err == nil {
			t.Fatalf("CreateStream on a lost connection: got stream %d, want an error", s.Identifier())
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = c.Close()
	if err := testkit.FindLeaks(testkit.LeakGrace, before); err != nil {
		if strings.Contains(err.Error(), "spdystream.(*Connection).shutdown") {
			t.Fatalf("Close left spdystream's shutdown waiting for a stream nobody will end: %v", err)
		}
		t.Fatal(err)
	}
}
