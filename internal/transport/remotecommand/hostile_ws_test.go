package remotecommand

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	gwebsocket "github.com/gorilla/websocket"

	"github.com/crisp-cri/crisp/internal/transport"
)

// A WebSocket streaming server that upgrades to protocol, says "hi" on
// stdout and then floods the error channel: with 32 KiB messages up to
// 256 MiB (many), or with one frame whose header claims 1 GiB (one).
func newWSFloodServer(t *testing.T, protocol, shape string) string {
	t.Helper()
	up := gwebsocket.Upgrader{Subprotocols: []string{protocol}, CheckOrigin: func(*http.Request) bool { return true }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		base64Framed := strings.Contains(protocol, "base64")
		send := func(ch byte, p []byte) error {
			if base64Framed {
				return conn.WriteMessage(gwebsocket.TextMessage, append([]byte{'0' + ch}, base64.StdEncoding.EncodeToString(p)...))
			}
			return conn.WriteMessage(gwebsocket.BinaryMessage, append([]byte{ch}, p...))
		}
		if send(chanStdout, []byte("hi\n")) != nil {
			return
		}
		switch shape {
		case "many":
			junk := bytes.Repeat([]byte("x"), 32<<10)
			for sent := 0; sent < 256<<20; sent += len(junk) {
				if send(chanError, junk) != nil {
					return
				}
			}
		case "one":
			// A final binary frame claiming 1 GiB, then as much of it as
			// the client reads.
			nc := conn.NetConn()
			op := byte(wsOpBinary)
			if base64Framed {
				op = 0x1 // text
			}
			hdr := []byte{0x80 | op, 127, 0, 0, 0, 0, 0, 0, 0, 0}
			binary.BigEndian.PutUint64(hdr[2:], 1<<30)
			first := byte(chanError)
			if base64Framed {
				first = '0' + chanError
			}
			if _, err := nc.Write(append(hdr, first)); err != nil {
				return
			}
			junk := bytes.Repeat([]byte("x"), 64<<10)
			for sent := 0; sent < 1<<30; sent += len(junk) {
				if _, err := nc.Write(junk); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/exec/x"
}

// The error channel of a WebSocket session is bounded as SPDY's is: a
// flood, in many messages or in one frame that claims a gigabyte, ends the
// session with errStatusTooLong (a base64 message past its bound, with
// gorilla's read limit), and memory stays far below what was sent.
func TestHostileWebSocketErrorFlood(t *testing.T) {
	for _, protocol := range []string{transport.ExecProtocolV5, transport.ExecProtocolV4, transport.ExecProtocolV4Base64} {
		for _, shape := range []string{"many", "one"} {
			t.Run(protocol+"/"+shape, func(t *testing.T) {
				url := newWSFloodServer(t, protocol, shape)
				offers, err := transport.ExecOffers(transport.WebSocket, protocol)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				var out bytes.Buffer
				_, err = Stream(ctx, "exec", func(context.Context) (string, error) { return url, nil }, offers,
					transport.Config{UpgradeTimeout: 5 * time.Second}, Streams{Stdout: &out, Stderr: io.Discard})
				runtime.ReadMemStats(&after)
				if ctx.Err() != nil {
					t.Fatalf("the session hung until the test's deadline: %v", err)
				}
				want := errStatusTooLong
				if shape == "one" && strings.Contains(protocol, "base64") {
					want = gwebsocket.ErrReadLimit // a text message is read whole: its size is bounded
				}
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want the error channel cut", err)
				}
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
					t.Errorf("the session allocated %d MiB reading a flooded error channel", grew>>20)
				}
				t.Log(err)
			})
		}
	}
}
