package remotecommand

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crisp-cri/crisp/internal/transport"
)

// WebSocket frame opcodes (RFC 6455) that wsStatusFilter tells apart.
const (
	wsOpContinuation = 0x0
	wsOpBinary       = 0x2
	wsOpClose        = 0x8
)

// wsErrorChannel is the error stream's channel on every channel.k8s.io
// framing.
const wsErrorChannel = 3

// wsStatusFilter is statusWatch on WebSocket channel.k8s.io: client-go's
// WebSocket executor runs the same v1 handler as over SPDY, with the same
// race (the error text reaches the handler just before every channel ends at
// once, and the handler may return nil first). client-go's connection is a
// *websocket.Conn that crisp cannot wrap, so the filter sits under it, on
// the network connection (above TLS): it reads the upgrade answer, and when
// the server chose channel.k8s.io it holds the error channel, as statusWatch
// does on SPDY: messages on channel 3 reach client-go empty, their text is
// recorded, and client-go's Close waits for release. Any other subprotocol
// passes through untouched. It also keeps client-go's heartbeat off the
// wire (wsquiet.go).
type wsStatusFilter struct {
	net.Conn
	w    *statusWatch
	br   *bufio.Reader
	hold atomic.Bool // the server chose channel.k8s.io
	// bound: the server chose a binary framing after v1 (v2-v5): frames
	// pass through, and what the error channel carries is counted and cut
	// past maxStatus (client-go's status reader keeps it whole).
	bound    atomic.Bool
	errBytes uint64 // bound: payload bytes seen on the error channel

	// upgraded: the server answered 101; from then on client-go's pings
	// stay here and its read deadlines are ignored (wsquiet.go).
	upgraded  atomic.Bool
	wmu       sync.Mutex
	outFrames wsOutFrames

	// Read's state (gorilla reads from one goroutine at a time).
	headersDone bool
	status      string // the answer's status line
	chose       bool   // the answer names channel.k8s.io
	counts      bool   // the answer names a binary framing after v1
	sawBlank    bool   // the upgrade answer's last line is queued
	out         []byte // bytes to hand out before reading on
	remain      uint64 // payload bytes of the current frame to pass through
	errMsg      bool   // the current message is on the error channel
}

func newWSStatusFilter(conn net.Conn, w *statusWatch) *wsStatusFilter {
	return &wsStatusFilter{Conn: conn, w: w, br: bufio.NewReaderSize(conn, wsBufferSize)}
}

// Close is deferred, once the filter holds, until release.
func (f *wsStatusFilter) Close() error {
	if f.hold.Load() {
		return nil
	}
	return f.Conn.Close()
}

func (f *wsStatusFilter) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !f.headersDone {
		if len(f.out) > 0 || !f.sawBlank {
			return f.readHeaderLine(p)
		}
		f.headersDone = true
	}
	if !f.hold.Load() && !f.bound.Load() {
		return f.br.Read(p)
	}
	for len(f.out) == 0 && f.remain == 0 {
		if err := f.nextFrame(); err != nil {
			f.w.end(err)
			return 0, err
		}
	}
	if len(f.out) > 0 {
		n := copy(p, f.out)
		f.out = f.out[n:]
		return n, nil
	}
	n, err := f.br.Read(p[:min(uint64(len(p)), f.remain)])
	f.remain -= uint64(n)
	if err != nil {
		f.w.end(err)
	}
	return n, err
}

// readHeaderLine hands out the upgrade answer a line at a time and reads
// the chosen subprotocol from it.
func (f *wsStatusFilter) readHeaderLine(p []byte) (int, error) {
	if len(f.out) == 0 {
		line, err := f.br.ReadString('\n')
		if err != nil {
			return 0, err
		}
		f.out = []byte(line)
		if f.status == "" {
			f.status = line
		}
		name, value, ok := strings.Cut(line, ":")
		switch {
		case ok && strings.EqualFold(strings.TrimSpace(name), headerWebSocketProtocol):
			chosen := lookupSpec(transport.Protocol{Transport: transport.WebSocket, Name: strings.TrimSpace(value)})
			f.chose = chosen.Name == transport.ExecProtocolV1
			f.counts = chosen.known && chosen.Framing == transport.FramingBinary && chosen.Name != transport.ExecProtocolV1
		case strings.TrimSpace(line) == "":
			f.sawBlank = true
			f.upgraded.Store(strings.Contains(f.status, " 101"))
			switch {
			case !f.upgraded.Load():
			case f.chose:
				f.w.holdV1()
				f.w.deferClose(f.Conn.Close)
				f.hold.Store(true)
			case f.counts:
				f.bound.Store(true)
			}
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// nextFrame reads a frame header and queues what client-go gets of it.
func (f *wsStatusFilter) nextFrame() error {
	var hdr [14]byte
	if _, err := io.ReadFull(f.br, hdr[:2]); err != nil {
		return err
	}
	n := wsHeaderLen(hdr[:2])
	if _, err := io.ReadFull(f.br, hdr[2:n]); err != nil {
		return err
	}
	b0, b1 := hdr[0], hdr[1]
	op := b0 & 0x0f
	fin := b0&0x80 != 0
	length := wsPayloadLen(hdr[:n])
	if b1&0x80 != 0 { // masked: servers never mask; pass it through
		f.out, f.remain = append(f.out, hdr[:n]...), length
		return nil
	}
	if op >= wsOpClose {
		if op == wsOpClose {
			// Every data message came before it: the text is complete.
			f.w.end(io.EOF)
		}
		f.out, f.remain = append(f.out, hdr[:n]...), length
		return nil
	}
	if op != wsOpContinuation {
		f.errMsg = false
		if op == wsOpBinary && length > 0 {
			var ch [1]byte
			if _, err := io.ReadFull(f.br, ch[:]); err != nil {
				return err
			}
			length--
			f.errMsg = ch[0] == wsErrorChannel
			if f.errMsg && f.bound.Load() {
				if err := f.count(length); err != nil {
					return err
				}
				f.out = append(append(f.out, hdr[:n]...), ch[0])
				f.remain = length
			} else if f.errMsg {
				if err := f.keep(length); err != nil {
					return err
				}
				f.out = append(f.out, b0, 1, ch[0]) // the channel, no text
			} else {
				f.out = append(append(f.out, hdr[:n]...), ch[0])
				f.remain = length
			}
			f.endMsg(fin)
			return nil
		}
	}
	if f.errMsg && f.bound.Load() {
		if err := f.count(length); err != nil {
			return err
		}
		f.out, f.remain = append(f.out, hdr[:n]...), length
	} else if f.errMsg {
		if err := f.keep(length); err != nil {
			return err
		}
		f.out = append(f.out, b0, 0)
	} else {
		f.out, f.remain = append(f.out, hdr[:n]...), length
	}
	f.endMsg(fin)
	return nil
}

func (f *wsStatusFilter) endMsg(fin bool) {
	if fin {
		f.errMsg = false
	}
}

// count adds n payload bytes to what the error channel carried, and ends
// the connection (errStatusTooLong, noted in the watch) past maxStatus:
// before the payload is read, so a frame that merely claims a gigabyte is
// cut as well.
func (f *wsStatusFilter) count(n uint64) error {
	f.errBytes += n
	if f.errBytes > maxStatus {
		f.w.tooLong.Store(true)
		_ = f.Conn.Close() // the session ends with errStatusTooLong; nothing more to read
		return errStatusTooLong
	}
	return nil
}

// keep reads n payload bytes of the error channel into the watch.
func (f *wsStatusFilter) keep(n uint64) error {
	buf := make([]byte, 4096)
	for n > 0 {
		m := min(n, uint64(len(buf)))
		if _, err := io.ReadFull(f.br, buf[:m]); err != nil {
			return err
		}
		f.w.record(buf[:m])
		n -= m
	}
	return nil
}
