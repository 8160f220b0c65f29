package streamserver

// Raw clients for the tests: a SPDY upgrade by hand (so that exactly one
// subprotocol is offered and the HTTP status is seen as sent), and the
// minimal session each protocol needs to prove it works.

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	clientportforward "k8s.io/client-go/tools/portforward" //nolint:depguard // test-only: the clients crictl and critest use, as independent checks of the server
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// bufferedConn reads what the response parser buffered before the conn.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// upgradeResult is what a server answered to an upgrade.
type upgradeResult struct {
	status   int
	body     string
	protocol string // negotiated subprotocol, when accepted
}

// spdyUpgrade offers the given X-Stream-Protocol-Version values (none when
// empty) and returns the answer and, on 101, the SPDY client connection.
func spdyUpgrade(t *testing.T, u *url.URL, protocols ...string) (upgradeResult, httpstream.Connection) {
	t.Helper()
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, u.String(), nil)
	req.Header.Set(httpstream.HeaderConnection, httpstream.HeaderUpgrade)
	req.Header.Set(httpstream.HeaderUpgrade, spdy.HeaderSpdy31)
	for _, p := range protocols {
		req.Header.Add(httpstream.HeaderProtocolVersion, p)
	}
	if err := req.Write(c); err != nil {
		_ = c.Close()
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		_ = c.Close()
		t.Fatalf("reading the upgrade response: %v", err)
	}
	res := upgradeResult{status: resp.StatusCode, protocol: resp.Header.Get(httpstream.HeaderProtocolVersion)}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		res.body = string(b)
		_ = c.Close()
		return res, nil
	}
	conn, err := spdy.NewClientConnection(&bufferedConn{c, br})
	if err != nil {
		t.Fatal(err)
	}
	return res, conn
}

func wsURL(u *url.URL) string {
	v := *u
	switch v.Scheme {
	case "https":
		v.Scheme = "wss"
	default:
		v.Scheme = "ws"
	}
	return v.String()
}

// wsUpgrade offers the given Sec-WebSocket-Protocol values.
func wsUpgrade(t *testing.T, u *url.URL, protocols ...string) (upgradeResult, *websocket.Conn) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial(wsURL(u), nil)
	if err != nil {
		if resp == nil {
			t.Fatalf("websocket dial: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return upgradeResult{status: resp.StatusCode, body: string(b)}, nil
	}
	return upgradeResult{status: resp.StatusCode, protocol: ws.Subprotocol()}, ws
}

// spdyRemoteCommand runs a stdout-only session on conn and returns stdout
// and the error stream's content.
func spdyRemoteCommand(t *testing.T, conn httpstream.Connection) (stdout, errStream string) {
	t.Helper()
	defer func() { _ = conn.Close() }()
	h := http.Header{}
	h.Set("streamType", "error")
	es, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	h = http.Header{}
	h.Set("streamType", "stdout")
	os, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(es)
		errc <- string(b)
	}()
	out, _ := io.ReadAll(os)
	select {
	case e := <-errc:
		return string(out), e
	case <-time.After(10 * time.Second):
		t.Fatal("error stream never ended")
	}
	return "", ""
}

// wsFrames reads a channel protocol session until the server closes it
// and returns the data per channel.
func wsFrames(t *testing.T, ws *websocket.Conn, base64Codec bool) map[byte]string {
	t.Helper()
	got := map[byte]string{}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("websocket session never ended")
			}
			return got
		}
		ch, data := decodeFrame(t, msg, base64Codec)
		got[ch] += string(data)
	}
}

func decodeFrame(t *testing.T, msg []byte, base64Codec bool) (byte, []byte) {
	t.Helper()
	if len(msg) == 0 {
		t.Fatal("empty websocket frame")
	}
	if !base64Codec {
		return msg[0], msg[1:]
	}
	data, err := base64.StdEncoding.DecodeString(string(msg[1:]))
	if err != nil {
		t.Fatalf("bad base64 frame %q: %v", msg, err)
	}
	return msg[0] - '0', data
}

func encodeFrame(ch byte, data []byte, base64Codec bool) (int, []byte) {
	if !base64Codec {
		return websocket.BinaryMessage, append([]byte{ch}, data...)
	}
	return websocket.TextMessage, []byte(string('0'+ch) + base64.StdEncoding.EncodeToString(data))
}

// spdyForward sends payload through one forwarded connection on conn and
// returns what came back; it half-closes after sending.
func spdyForward(t *testing.T, conn httpstream.Connection, port int32, requestID int, payload string) (echo, errStream string) {
	t.Helper()
	h := http.Header{}
	h.Set("streamType", "error")
	h.Set("port", strconv.Itoa(int(port)))
	h.Set("requestID", strconv.Itoa(requestID))
	es, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	_ = es.Close() // the client never writes on the error stream
	h.Set("streamType", "data")
	ds, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(es)
		errc <- string(b)
	}()
	if _, err := io.WriteString(ds, payload); err != nil {
		t.Fatal(err)
	}
	_ = ds.Close() // half-close: the echo server then ends its side
	got, _ := io.ReadAll(ds)
	select {
	case e := <-errc:
		errStream = e
	case <-time.After(10 * time.Second):
		t.Fatal("port-forward error stream never ended")
	}
	conn.RemoveStreams(ds, es)
	return string(got), errStream
}

// wsDirectForward runs the direct WebSocket protocol for one port: the
// port prefix on both channels, then payload out and the echo back.
func wsDirectForward(t *testing.T, ws *websocket.Conn, port int32, payload string, base64Codec bool) string {
	t.Helper()
	defer func() { _ = ws.Close() }()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	seen := map[byte]bool{}
	for len(seen) < 2 {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("reading the port prefix: %v", err)
		}
		ch, data := decodeFrame(t, msg, base64Codec)
		if len(data) != 2 || int32(binary.LittleEndian.Uint16(data)) != port {
			t.Fatalf("channel %d: first frame %v, want port %d little-endian", ch, data, port)
		}
		seen[ch] = true
	}
	typ, frame := encodeFrame(0, []byte(payload), base64Codec)
	if err := ws.WriteMessage(typ, frame); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for got.Len() < len(payload) {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("reading the echo after %q: %v", got.String(), err)
		}
		ch, data := decodeFrame(t, msg, base64Codec)
		switch ch {
		case 0:
			got.Write(data)
		case 1:
			if len(data) > 0 {
				t.Fatalf("error channel: %s", data)
			}
		}
	}
	return got.String()
}

// tunnelConnection turns an accepted tunnel WebSocket into the SPDY client
// connection client-go's tunneling dialer makes.
func tunnelConnection(t *testing.T, ws *websocket.Conn) httpstream.Connection {
	t.Helper()
	conn, err := spdy.NewClientConnection(clientportforward.NewTunnelingConnection("test", ws))
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func mustEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
