package remotecommand

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"

	"github.com/crisp-cri/crisp/internal/transport"
)

// The base64 framings of remote commands (base64.channel.k8s.io,
// v4.base64.channel.k8s.io) are text messages whose first byte is the
// channel as an ASCII digit and whose rest is base64. client-go's WebSocket
// executor reads binary frames only, so crisp speaks these itself, behind
// the same Executor interface and recorder as the other executors: exec,
// attach and probe get the same handshake handling, timeouts, proxy and
// exit-status reading whatever the framing.

// Remote-command channels.
const (
	chanStdin  = 0
	chanStdout = 1
	chanStderr = 2
	chanError  = 3
	chanResize = 4
)

// base64StdinChunk is the largest stdin payload of one message. Every
// message must go out as one frame: the streaming servers of containerd and
// CRI-O (k8s.io/streaming's wsstream, on x/net/websocket) do not reassemble
// fragmented messages, and gorilla fragments a message larger than its
// write buffer, so the buffer holds the largest (base64-encoded) one.
const base64StdinChunk = 16 << 10

// maxBase64Message bounds one message of a base64 framing.
const maxBase64Message = 16 << 20

// base64Executor runs one session over a base64 framing.
type base64Executor struct {
	cfg       transport.Config
	url       string
	protocols []string
	rec       *recorder
	version   int // the protocol's remote-command version
}

// newBase64Executor speaks the offered protocols, given with their
// catalogue entries (specs, in offer order).
func newBase64Executor(cfg transport.Config, rawURL string, specs []protocolSpec, rec *recorder) (clientremotecommand.Executor, error) {
	e := &base64Executor{cfg: cfg, url: rawURL, rec: rec}
	for _, spec := range specs {
		if !spec.known || spec.Transport != transport.WebSocket || spec.Framing != transport.FramingBase64 {
			return nil, fmt.Errorf("%s is not a base64 framing; offer it alone or with other base64 framings", spec.Name)
		}
		e.protocols = append(e.protocols, spec.Name)
		e.version = max(e.version, spec.Version)
	}
	return e, nil
}

// Stream implements clientremotecommand.Executor.
func (e *base64Executor) Stream(opts clientremotecommand.StreamOptions) error {
	return e.StreamWithContext(context.Background(), opts)
}

// StreamWithContext implements clientremotecommand.Executor.
func (e *base64Executor) StreamWithContext(ctx context.Context, opts clientremotecommand.StreamOptions) error {
	conn, protocol, err := e.dial(ctx)
	if err != nil {
		return err
	}
	var wmu sync.Mutex
	send := func(ch byte, data []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return conn.WriteMessage(gwebsocket.TextMessage, append([]byte{'0' + ch}, base64.StdEncoding.EncodeToString(data)...))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done)
		_ = conn.Close() // an error closing or writing here has nowhere better to go
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			_ = conn.Close() // an error closing or writing here has nowhere better to go
		case <-done:
		}
	}()
	if opts.Tty && opts.TerminalSizeQueue != nil {
		// Like client-go's, this goroutine ends when the queue says so.
		go func() {
			for {
				size := opts.TerminalSizeQueue.Next()
				if size == nil {
					return
				}
				b, _ := json.Marshal(size) // two integers cannot fail to marshal
				if send(chanResize, b) != nil {
					return
				}
			}
		}()
	}
	if opts.Stdin != nil {
		// These framings cannot close stdin: after the last byte the remote
		// stdin stays open until the session ends. Like client-go's, this
		// goroutine is not waited for: a terminal's read may never return.
		go func() {
			buf := make([]byte, base64StdinChunk)
			for {
				n, err := opts.Stdin.Read(buf)
				if n > 0 && send(chanStdin, buf[:n]) != nil {
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	errText, err := e.read(ctx, conn, protocol, opts)
	if err != nil {
		return err
	}
	return e.outcome(errText)
}

// dial upgrades, offering the protocols, and reports the answer to the
// recorder as the other executors do.
func (e *base64Executor) dial(ctx context.Context) (*gwebsocket.Conn, string, error) {
	u, err := transport.WebSocketURL(e.url)
	if err != nil {
		return nil, "", err
	}
	d := gwebsocket.Dialer{
		Proxy:           http.ProxyFromEnvironment,
		TLSClientConfig: e.cfg.TLS,
		Subprotocols:    e.protocols,
		ReadBufferSize:  64 << 10,
		WriteBufferSize: 64 << 10,
		NetDialContext:  e.rec.dial,
	}
	e.rec.dialing()
	conn, resp, err := d.DialContext(ctx, u, nil)
	if err != nil {
		if resp != nil {
			defer func() { _ = resp.Body.Close() }() // closing what was read reports nothing to act on
			return nil, "", e.rec.refuse(resp.StatusCode, transport.RefusalReason(resp))
		}
		if errors.Is(err, gwebsocket.ErrBadHandshake) {
			return nil, "", e.rec.refuse(0, err.Error())
		}
		return nil, "", err
	}
	protocol := conn.Subprotocol()
	ok := false
	for _, p := range e.protocols {
		ok = ok || p == protocol
	}
	if !ok {
		_ = conn.Close() // an error closing or writing here has nowhere better to go
		return nil, "", e.rec.refuse(resp.StatusCode, fmt.Sprintf("server switched protocols but chose subprotocol %q, not one of %q", protocol, e.protocols))
	}
	if err := e.rec.accept(resp.StatusCode, protocol); err != nil {
		_ = conn.Close() // an error closing or writing here has nowhere better to go
		return nil, "", err
	}
	// transport/liveness pings only after a silence with everything read
	// (wsquiet.go says why that matters).
	e.rec.startLiveness(func() error {
		return conn.WriteControl(gwebsocket.PingMessage, nil, time.Now().Add(e.rec.peerBound))
	})
	return conn, protocol, nil
}

// read copies the output channels until the server closes, and returns
// what the error channel carried.
func (e *base64Executor) read(ctx context.Context, conn *gwebsocket.Conn, protocol string, opts clientremotecommand.StreamOptions) ([]byte, error) {
	var errText []byte
	// A message is one server read, base64-encoded (tens of KiB): a bound
	// far above that keeps one message that claims a gigabyte from being
	// read whole.
	conn.SetReadLimit(maxBase64Message)
	for {
		mt, data, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var ce *gwebsocket.CloseError
			if errors.As(err, &ce) && ce.Code == gwebsocket.CloseNormalClosure {
				return errText, nil
			}
			if errors.Is(err, gwebsocket.ErrReadLimit) {
				return nil, fmt.Errorf("%s: the runtime sent a message over %d MiB, where one holds one read of the command's output; crisp cut it there: %w", protocol, maxBase64Message>>20, err)
			}
			return nil, fmt.Errorf("reading %s: %w", protocol, err)
		}
		if len(data) == 0 {
			continue
		}
		if mt != gwebsocket.TextMessage || data[0] < '0' {
			return nil, fmt.Errorf("%s: a frame that is not base64 text (type %d)", protocol, mt)
		}
		ch := data[0] - '0'
		payload, err := base64.StdEncoding.DecodeString(string(data[1:]))
		if err != nil {
			return nil, fmt.Errorf("%s: undecodable base64 on channel %d: %w", protocol, ch, err)
		}
		var w io.Writer
		switch ch {
		case chanStdout:
			w = opts.Stdout
		case chanStderr:
			w = opts.Stderr
			if opts.Tty {
				w = opts.Stdout
			}
		case chanError:
			if len(errText)+len(payload) > maxStatus {
				return nil, errStatusTooLong
			}
			errText = append(errText, payload...)
		}
		if w != nil && len(payload) > 0 {
			if _, err := w.Write(payload); err != nil {
				return nil, err
			}
		}
	}
}

// outcome reads the error channel as client-go reads it for the binary
// framings: a status on v4, an error text (stating the code, if the runtime
// says it) before.
func (e *base64Executor) outcome(text []byte) error {
	if len(text) == 0 {
		return nil
	}
	if e.version < 4 {
		return fmt.Errorf("error executing remote command: %s", text)
	}
	var st metav1.Status
	if err := json.Unmarshal(text, &st); err != nil {
		return fmt.Errorf("error stream protocol error: %w in %q", err, text)
	}
	switch st.Status {
	case metav1.StatusSuccess:
		return nil
	case metav1.StatusFailure:
		if st.Reason == "NonZeroExitCode" && st.Details != nil {
			for _, c := range st.Details.Causes {
				if c.Type != "ExitCode" {
					continue
				}
				rc, err := strconv.ParseUint(c.Message, 10, 8)
				if err != nil {
					return fmt.Errorf("error stream protocol error: invalid exit code value %q", c.Message)
				}
				return exec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", rc), Code: int(rc)}
			}
		}
	default:
		return errors.New("error stream protocol error: unknown error")
	}
	return errors.New(st.Message)
}
