package portforward

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/crisp-cri/crisp/internal/transport"
)

// pfWebSocketBuffer sizes the WebSocket read and write buffers. Every message
// crisp sends must fit in one frame: CRI streaming servers (x/net/websocket
// underneath k8s.io/streaming's wsstream) read one frame per message and
// would misroute continuation frames.
const pfWebSocketBuffer = 64<<10 + 1024

// pfMaxBase64Message bounds a base64 message from the server (crisp decodes
// them whole); servers send at most a copy buffer's worth, 32 KiB or so.
const pfMaxBase64Message = 8 << 20

// pfWebSocketChunk is the largest payload crisp puts in one binary frame;
// pfWebSocketChunkBase64 in one base64 frame (4/3 of it once encoded). Both
// fit pfWebSocketBuffer with the channel byte.
const (
	pfWebSocketChunk       = 64 << 10
	pfWebSocketChunkBase64 = 32 << 10
)

// connectWebSocket dials the direct WebSocket port-forward protocol with the
// ports in the URL's query, one data/error channel pair per port.
func connectWebSocket(ctx context.Context, att *transport.Attempt, u *url.URL, ports []uint16, cfg transport.Config) (ForwardSession, error) {
	withPorts := *u
	q := withPorts.Query()
	for _, p := range ports {
		q.Add(pfHeaderPort, strconv.Itoa(int(p)))
	}
	withPorts.RawQuery = q.Encode()
	att.URL = withPorts.String()
	ws, err := pfDialWebSocket(ctx, att, att.URL, cfg, pfWebSocketBuffer)
	if err != nil {
		return nil, err
	}
	s := &wsSession{
		ws:       ws,
		protocol: att.Protocol,
		base64:   att.Protocol == transport.PortForwardWebSocketBase64,
		cfg:      cfg,
		done:     make(chan struct{}),
	}
	if s.base64 {
		// Base64 messages are decoded whole: bound them.
		ws.SetReadLimit(pfMaxBase64Message)
	}
	ws.SetPongHandler(s.pong)
	for i, p := range ports {
		pr, pw := io.Pipe()
		s.ports = append(s.ports, &wsPort{session: s, index: i, port: p, pr: pr, pw: pw, dataPrefix: 2, errPrefix: 2})
	}
	s.wg.Add(1)
	go s.readLoop()
	return s, nil
}

// wsSession is one direct WebSocket: per port a data channel 2i and an error
// channel 2i+1. The server starts every channel with the port as 2
// little-endian bytes; crisp strips them.
type wsSession struct {
	ws       *websocket.Conn
	protocol string
	base64   bool
	cfg      transport.Config
	ports    []*wsPort

	// Base64 decoding buffers, used by the read loop only.
	b64in, b64out []byte
	b64reader     bytes.Reader

	writeMu sync.Mutex
	// pings waiting for their pong, by payload (flushed).
	pingMu  sync.Mutex
	pings   map[string]chan struct{}
	pingSeq int
	// readErr is why the read loop ended, set before done is closed.
	readErr   error
	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// wsPort is one port's channel pair, and the ForwardConn that reads it.
type wsPort struct {
	session *wsSession
	index   int
	port    uint16
	pr      *io.PipeReader
	pw      *io.PipeWriter
	// Read-loop state: port bytes still to strip, and the error message.
	dataPrefix, errPrefix int
	errMsg                []byte
	opened                bool
	// ownsSession makes Close close the whole session (one connection per
	// WebSocket, as the forwarder uses it).
	ownsSession bool
	closeOnce   sync.Once
}

func (s *wsSession) Protocol() string      { return s.protocol }
func (s *wsSession) Done() <-chan struct{} { return s.done }

// Open returns the forwarded connection of a port named at dial time; each
// port opens once.
func (s *wsSession) Open(ctx context.Context, port uint16) (ForwardConn, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for _, p := range s.ports {
		if p.port == port && !p.opened {
			p.opened = true
			return p, nil
		}
	}
	return nil, fmt.Errorf("port-forward: this WebSocket carries no unopened connection to port %d (dial a new one: the protocol opens connections only in the handshake)", port)
}

func (s *wsSession) Close() error {
	s.closeOnce.Do(func() {
		for _, p := range s.ports {
			_ = p.pr.Close()
		}
		// WriteControl and Close may run beside a blocked writer (gorilla
		// allows it); Close unblocks it.
		_ = s.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), pfDeadlineSoon())
		_ = s.ws.Close()
	})
	s.wg.Wait()
	return nil
}

// readLoop demultiplexes frames onto the ports' pipes (blocking: the pipe is
// the flow control) and error buffers.
func (s *wsSession) readLoop() {
	defer s.wg.Done()
	buf := make([]byte, pfWebSocketChunk)
	var err error
	for {
		var r io.Reader
		_, r, err = s.ws.NextReader()
		if err != nil {
			break
		}
		var hdr [1]byte
		if _, rerr := io.ReadFull(r, hdr[:]); rerr != nil {
			continue // empty message
		}
		ch := int(hdr[0])
		if s.base64 {
			ch -= '0'
			if r, err = s.decodeBase64(r); err != nil {
				break
			}
		}
		if ch < 0 || ch/2 >= len(s.ports) {
			continue // a channel crisp did not ask for
		}
		p := s.ports[ch/2]
		var n int
		if ch%2 == 0 {
			n, err = p.fromData(r, buf)
		} else {
			n, err = p.fromError(r, buf)
		}
		if err != nil {
			break
		}
		s.traceFrame("<-", ch, n)
	}
	s.readErr = err
	close(s.done)
	for _, p := range s.ports {
		_ = p.pw.Close()
	}
}

// decodeBase64 reads the rest of a text message and decodes it in one go
// (a streaming decoder is several times slower), in buffers the session
// reuses; the read limit set at dial bounds them.
func (s *wsSession) decodeBase64(r io.Reader) (io.Reader, error) {
	s.b64in = s.b64in[:0]
	for {
		if len(s.b64in) == cap(s.b64in) {
			s.b64in = append(s.b64in, 0)[:len(s.b64in)]
		}
		n, err := r.Read(s.b64in[len(s.b64in):cap(s.b64in)])
		s.b64in = s.b64in[:len(s.b64in)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if need := base64.StdEncoding.DecodedLen(len(s.b64in)); cap(s.b64out) < need {
		s.b64out = make([]byte, need)
	}
	n, err := base64.StdEncoding.Decode(s.b64out[:cap(s.b64out)], s.b64in)
	if err != nil {
		return nil, fmt.Errorf("a base64 frame from the streaming server does not decode: %w", err)
	}
	s.b64reader.Reset(s.b64out[:n])
	return &s.b64reader, nil
}

func (p *wsPort) fromData(r io.Reader, buf []byte) (total int, _ error) {
	for {
		n, err := r.Read(buf)
		total += n
		b := buf[:n]
		if p.dataPrefix > 0 {
			k := min(p.dataPrefix, len(b))
			p.dataPrefix -= k
			b = b[k:]
		}
		if len(b) > 0 {
			if _, werr := p.pw.Write(b); werr != nil {
				// The reader went away (connection closed locally):
				// discard what the server still sends.
				if !errors.Is(werr, io.ErrClosedPipe) {
					return total, werr
				}
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (p *wsPort) fromError(r io.Reader, buf []byte) (total int, _ error) {
	for {
		n, err := r.Read(buf)
		total += n
		b := buf[:n]
		if p.errPrefix > 0 {
			k := min(p.errPrefix, len(b))
			p.errPrefix -= k
			b = b[k:]
		}
		if room := pfMaxErrorMessage - len(p.errMsg); room > 0 {
			p.errMsg = append(p.errMsg, b[:min(room, len(b))]...)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (s *wsSession) traceFrame(dir string, ch, size int) {
	if s.cfg.Trace == nil {
		return
	}
	kind := "data"
	if ch%2 == 1 {
		kind = "error"
	}
	pfTracef(s.cfg, "%s ch%d %s %d B (WebSocket)", dir, ch, kind, size)
}

func (p *wsPort) RemotePort() uint16 { return p.port }

func (p *wsPort) Read(b []byte) (int, error) {
	n, err := p.pr.Read(b)
	if err == nil || n > 0 {
		return n, nil
	}
	s := p.session
	select {
	case <-s.done:
	default:
		return 0, err // closed locally
	}
	if msg := strings.TrimSpace(string(p.errMsg)); msg != "" {
		return 0, &RemoteError{Port: p.port, Message: msg}
	}
	if s.readErr != nil && !pfCleanClose(s.readErr) {
		return 0, fmt.Errorf("remote port %d: WebSocket to the streaming server failed: %w", p.port, s.readErr)
	}
	return 0, io.EOF
}

// RemoteError is the runtime's message for this port once the WebSocket has
// ended (it arrives before the end on the same connection), else nil.
func (p *wsPort) RemoteError() error {
	select {
	case <-p.session.done:
	default:
		return nil
	}
	if msg := strings.TrimSpace(string(p.errMsg)); msg != "" {
		return &RemoteError{Port: p.port, Message: msg}
	}
	return nil
}

// pfCleanClose tells a WebSocket that ended normally from one that broke.
func pfCleanClose(err error) bool {
	if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
		return true
	}
	return errors.Is(err, io.EOF)
}

func (p *wsPort) Write(b []byte) (int, error) {
	s := p.session
	ch := byte(2 * p.index)
	limit := pfWebSocketChunk
	if s.base64 {
		limit = pfWebSocketChunkBase64
	}
	written := 0
	for len(b) > 0 {
		chunk := b[:min(len(b), limit)]
		if err := s.writeFrame(ch, chunk); err != nil {
			return written, err
		}
		written += len(chunk)
		b = b[len(chunk):]
	}
	return written, nil
}

func (s *wsSession) writeFrame(ch byte, data []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	kind := websocket.BinaryMessage
	if s.base64 {
		kind = websocket.TextMessage
	}
	w, err := s.ws.NextWriter(kind)
	if err != nil {
		return err
	}
	if s.base64 {
		if _, err = w.Write([]byte{'0' + ch}); err == nil {
			enc := base64.NewEncoder(base64.StdEncoding, w)
			if _, err = enc.Write(data); err == nil {
				err = enc.Close()
			}
		}
	} else {
		if _, err = w.Write([]byte{ch}); err == nil {
			_, err = w.Write(data)
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		s.traceFrame("->", int(ch), len(data))
	}
	return err
}

// flushed pings the server and returns a channel closed by its pong. The
// server reads its connection in order and answers a ping when it reads it,
// having handed every earlier message to the remote port: so once the pong
// is back, everything written before has left the server.
func (p *wsPort) flushed() (<-chan struct{}, error) {
	s := p.session
	s.pingMu.Lock()
	if s.pings == nil {
		s.pings = map[string]chan struct{}{}
	}
	s.pingSeq++
	payload := "crisp-" + strconv.Itoa(s.pingSeq)
	ch := make(chan struct{})
	s.pings[payload] = ch
	s.pingMu.Unlock()
	if err := s.ws.WriteControl(websocket.PingMessage, []byte(payload), pfDeadlineSoon()); err != nil {
		return nil, err
	}
	return ch, nil
}

// pong is the WebSocket's pong handler (the read loop calls it).
func (s *wsSession) pong(payload string) error {
	s.pingMu.Lock()
	if ch, ok := s.pings[payload]; ok {
		delete(s.pings, payload)
		close(ch)
	}
	s.pingMu.Unlock()
	return nil
}

// CloseWrite cannot be carried by this protocol: see ErrHalfCloseUnsupported.
func (p *wsPort) CloseWrite() error { return ErrHalfCloseUnsupported }

func (p *wsPort) Close() error {
	if p.ownsSession {
		return p.session.Close()
	}
	p.closeOnce.Do(func() { _ = p.pr.Close() })
	return nil
}
