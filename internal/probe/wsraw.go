package probe

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/crisp-cri/crisp/internal/transport"
)

// A minimal client for the WebSocket remote-command framings that crisp's
// exec transport (client-go's executor) does not read: base64.channel.k8s.io
// and v4.base64.channel.k8s.io, text frames whose first byte is the channel
// as an ASCII digit and whose rest is base64. probe and smoke use it so a
// runtime's base64 support gets functional checks, not only a handshake;
// exec and attach never offer these protocols.

// WebSocket remote-command channels.
const (
	wsStdin  = 0
	wsStdout = 1
	wsStderr = 2
	wsError  = 3
	wsResize = 4
)

// wsStdinChunk is the largest stdin payload of one message.
const wsStdinChunk = 16 << 10

// wsExitError is a remote exit code read from the error channel.
type wsExitError struct {
	code int
	msg  string
}

func (e *wsExitError) Error() string   { return e.msg }
func (e *wsExitError) ExitStatus() int { return e.code }

// exitCodeText finds the code in a pre-v4 error text, as runtimes word it
// ("... exit code 7", "... exited with 7").
var exitCodeText = regexp.MustCompile(`(?:exit code|exit status|exited with)\s*:?\s*(\d+)`)

// wsDial upgrades rawURL offering protocol alone and records the answer.
func wsDial(ctx context.Context, rawURL, protocol string, tlsCfg *tls.Config) (*websocket.Conn, Handshake, error) {
	wsURL := rawURL
	switch {
	case strings.HasPrefix(rawURL, "http://"):
		wsURL = "ws://" + strings.TrimPrefix(rawURL, "http://")
	case strings.HasPrefix(rawURL, "https://"):
		wsURL = "wss://" + strings.TrimPrefix(rawURL, "https://")
	}
	// Every message must go out as one frame: the streaming servers of
	// containerd and CRI-O (k8s.io/streaming's wsstream, on x/net/websocket)
	// do not reassemble fragmented messages. gorilla fragments a message
	// larger than its write buffer, so the buffer holds the largest stdin
	// message (wsStdinChunk, base64-encoded, plus the channel byte).
	d := websocket.Dialer{
		TLSClientConfig:  tlsCfg,
		Subprotocols:     []string{protocol},
		HandshakeTimeout: 30 * time.Second,
		ReadBufferSize:   64 << 10,
		WriteBufferSize:  64 << 10,
	}
	start := time.Now()
	conn, resp, err := d.DialContext(ctx, wsURL, nil)
	hs := Handshake{Upgrade: time.Since(start)}
	if resp != nil {
		hs.Status = resp.StatusCode
		if resp.StatusCode != http.StatusSwitchingProtocols {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			hs.Reason = strings.TrimSpace(http.StatusText(resp.StatusCode) + ": " + strings.TrimSpace(string(body)))
		}
		resp.Body.Close()
	}
	if err != nil {
		if hs.Status != 0 {
			return nil, hs, fmt.Errorf("WebSocket %s refused %s (HTTP %d): %s", rawURL, protocol, hs.Status, hs.Reason)
		}
		return nil, hs, fmt.Errorf("WebSocket %s offering %s: %w", rawURL, protocol, transport.DescribeTLSError(rawURL, err))
	}
	hs.Negotiated = conn.Subprotocol()
	hs.Accepted = hs.Negotiated == protocol
	if !hs.Accepted {
		conn.Close()
		return nil, hs, fmt.Errorf("WebSocket %s upgraded but negotiated %q, not %s", rawURL, hs.Negotiated, protocol)
	}
	return conn, hs, nil
}

// wsStream runs one session over a WebSocket channel framing (binary or
// base64) and returns the remote outcome as Streamer.Stream does.
func wsStream(ctx context.Context, rawURL string, p Protocol, sess Session, tlsCfg *tls.Config) (Handshake, error) {
	conn, hs, err := wsDial(ctx, rawURL, p.Name, tlsCfg)
	if err != nil {
		return hs, err
	}
	b64 := strings.Contains(p.Name, "base64")
	var wmu sync.Mutex
	send := func(ch byte, data []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		if b64 {
			return conn.WriteMessage(websocket.TextMessage, append([]byte{'0' + ch}, base64.StdEncoding.EncodeToString(data)...))
		}
		return conn.WriteMessage(websocket.BinaryMessage, append([]byte{ch}, data...))
	}

	var wg sync.WaitGroup
	done := make(chan struct{})
	defer func() {
		close(done)
		conn.Close()
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			conn.Close()
		case <-done:
		}
	}()
	sendSize := func(ts TermSize) error {
		size, _ := json.Marshal(map[string]uint16{"Width": ts.Width, "Height": ts.Height})
		return send(wsResize, size)
	}
	if sess.TTY && sess.Size != nil {
		if err := sendSize(*sess.Size); err != nil {
			return hs, fmt.Errorf("sending the terminal size over %s: %w", p, err)
		}
		if sess.Resize != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case ts, ok := <-sess.Resize:
						if !ok || sendSize(ts) != nil {
							return
						}
					case <-done:
						return
					}
				}
			}()
		}
	}
	if sess.Stdin != nil {
		// These framings cannot close stdin: after the last byte the
		// remote stdin stays open until the session ends.
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, wsStdinChunk)
			for {
				n, err := sess.Stdin.Read(buf)
				if n > 0 {
					if send(wsStdin, buf[:n]) != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}

	var errText []byte
	for {
		mt, data, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return hs, ctx.Err()
			}
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code == websocket.CloseNormalClosure {
				break
			}
			return hs, fmt.Errorf("session over %s from %s failed: %w", p, rawURL, err)
		}
		if len(data) == 0 {
			continue
		}
		ch, payload := data[0], data[1:]
		if b64 {
			if mt != websocket.TextMessage || ch < '0' {
				return hs, fmt.Errorf("%s: a frame that is not base64 text (type %d)", p, mt)
			}
			ch -= '0'
			dec, err := base64.StdEncoding.DecodeString(string(payload))
			if err != nil {
				return hs, fmt.Errorf("%s: undecodable base64 on channel %d: %w", p, ch, err)
			}
			payload = dec
		}
		var w io.Writer
		switch ch {
		case wsStdout:
			w = sess.Stdout
		case wsStderr:
			w = sess.Stderr
			if sess.TTY {
				w = sess.Stdout
			}
		case wsError:
			errText = append(errText, payload...)
		}
		if w != nil && len(payload) > 0 {
			if _, err := w.Write(payload); err != nil {
				return hs, err
			}
		}
	}
	return hs, remoteOutcome(p, errText)
}

// remoteOutcome reads the error channel: a JSON status on v4 framings, a
// plain text (stating the code, if the runtime says it) on older ones.
func remoteOutcome(p Protocol, text []byte) error {
	if len(text) == 0 {
		return nil
	}
	if strings.HasPrefix(p.Name, "v4.") || strings.HasPrefix(p.Name, "v5.") {
		var st struct {
			Status  string `json:"status"`
			Message string `json:"message"`
			Reason  string `json:"reason"`
			Details struct {
				Causes []struct {
					Reason  string `json:"reason"`
					Message string `json:"message"`
				} `json:"causes"`
			} `json:"details"`
		}
		if err := json.Unmarshal(text, &st); err != nil {
			return fmt.Errorf("%s: the error channel holds no status: %q", p, clip(string(text)))
		}
		if st.Status == "Success" {
			return nil
		}
		for _, c := range st.Details.Causes {
			if c.Reason == "ExitCode" {
				if code, err := strconv.Atoi(c.Message); err == nil {
					return &wsExitError{code: code, msg: st.Message}
				}
			}
		}
		return fmt.Errorf("%s: %s", p, st.Message)
	}
	if m := exitCodeText.FindSubmatch(text); m != nil {
		code, _ := strconv.Atoi(string(m[1]))
		return &wsExitError{code: code, msg: string(text)}
	}
	return fmt.Errorf("%s", text)
}
