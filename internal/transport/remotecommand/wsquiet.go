package remotecommand

import (
	"encoding/binary"
	"time"
)

// client-go's WebSocket executor runs a heartbeat: a ping every 5 s, and a
// read deadline 61 s ahead that only a pong pushes back. Both lose a
// session's output, which crisp measured on the mock runtime, containerd and
// CRI-O alike (docs/runtimes.md, "WebSocket pings and a slow reader"):
//
//   - The streaming servers close the connection as soon as the command has
//     ended and its output is written, which on a busy machine or with a
//     slow local reader (`crisp exec ... | slow-consumer`) is megabytes
//     before crisp has read it. A ping that reaches the closed socket makes
//     the server's kernel answer with a reset, which throws away what it had
//     not sent yet: 16 MiB read at 320 KB/s arrived 3.5 MB short, and a
//     64 MiB integrity test under two test runs lost 3 MB.
//   - A local reader that pauses for a minute (`| less`) stops the pong from
//     being read, and the deadline ends the session with an i/o timeout.
//
// So on a WebSocket exec or attach crisp sends no pings and keeps no read
// deadline: wsStatusFilter drops client-go's ping frames on their way out
// (wsOutFrames) and ignores its read deadlines once the connection is
// upgraded. A peer that vanishes is still noticed: the dialer's TCP
// keepalive probes carry no data, so they never provoke the reset, and
// they end the connection when the peer stops answering. SPDY keeps its
// pings: the SPDY servers do not reset on them (the same slow reader
// passes there).

// WebSocket opcodes the outgoing filter tells apart (RFC 6455).
const wsOpPing = 0x9

// wsHeaderLen is the length of the frame header that h begins: 2 until its
// second byte is known, then with the extended length and the mask key.
func wsHeaderLen(h []byte) int {
	if len(h) < 2 {
		return 2
	}
	n := 2
	switch h[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if h[1]&0x80 != 0 {
		n += 4
	}
	return n
}

// wsPayloadLen is the payload length a complete frame header h gives.
func wsPayloadLen(h []byte) uint64 {
	switch l := h[1] & 0x7f; l {
	case 126:
		return uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		return binary.BigEndian.Uint64(h[2:10])
	default:
		return uint64(l)
	}
}

// wsOutFrames follows the frames crisp writes, across writes (gorilla may
// write a frame's header and payload apart), and leaves the pings out.
type wsOutFrames struct {
	hdr    []byte // a header begun in an earlier write, held back
	remain uint64 // payload bytes of the current frame still to come
	drop   bool   // the current frame is a ping
}

// filter hands pass the bytes of p that go out, in order, in as few calls
// as it can.
func (o *wsOutFrames) filter(p []byte, pass func([]byte) error) error {
	start := 0 // p[start:i] goes out with the next pass
	flush := func(end int) error {
		var err error
		if end > start {
			err = pass(p[start:end])
		}
		start = end
		return err
	}
	for i := 0; i < len(p); {
		if o.remain > 0 {
			n := int(min(uint64(len(p)-i), o.remain))
			o.remain -= uint64(n)
			if o.drop {
				if err := flush(i); err != nil {
					return err
				}
				start = i + n
			}
			i += n
			continue
		}
		held := len(o.hdr)
		begin := i
		for i < len(p) && len(o.hdr) < wsHeaderLen(o.hdr) {
			o.hdr = append(o.hdr, p[i])
			i++
		}
		if len(o.hdr) < wsHeaderLen(o.hdr) {
			// The header ends in the next write: hold it back until the
			// frame's opcode and length are known.
			return flush(begin)
		}
		o.drop = o.hdr[0]&0x0f == wsOpPing
		o.remain = wsPayloadLen(o.hdr)
		switch {
		case o.drop:
			if err := flush(begin); err != nil {
				return err
			}
			start = i
		case held > 0:
			// The header's beginning came with an earlier write (so begin
			// is 0): it goes out first, then p from its start.
			if err := pass(o.hdr[:held]); err != nil {
				return err
			}
		}
		o.hdr = o.hdr[:0]
	}
	return flush(len(p))
}

// Write passes what client-go writes, without its pings once the
// connection is upgraded.
func (f *wsStatusFilter) Write(p []byte) (int, error) {
	if !f.upgraded.Load() {
		return f.Conn.Write(p)
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	err := f.outFrames.filter(p, func(b []byte) error {
		_, err := f.Conn.Write(b)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// wsLivenessPing is crisp's own ping, masked as a client's frames must
// be, with an empty payload. transport/liveness sends it only when crisp
// has read everything and nothing came for a quarter of the bound: a server
// that has closed then has nothing queued that a reset could throw away
// (the reason client-go's pings stay off the wire, above). Its pong is
// read by gorilla as any control frame; its arrival is the sign of life.
var wsLivenessPing = []byte{0x80 | wsOpPing, 0x80, 0, 0, 0, 0}

// ping writes wsLivenessPing between two of client-go's frames; in the
// middle of one (its header and payload may come in two writes) it sends
// nothing this time, and the next tick tries again.
func (f *wsStatusFilter) ping() error {
	if !f.upgraded.Load() {
		return nil
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if f.outFrames.remain > 0 || len(f.outFrames.hdr) > 0 {
		return nil
	}
	_, err := f.Conn.Write(wsLivenessPing)
	return err
}

// SetReadDeadline applies until the upgrade (gorilla's handshake timeout);
// after it, the heartbeat's deadlines are ignored (see above).
func (f *wsStatusFilter) SetReadDeadline(t time.Time) error {
	if f.upgraded.Load() {
		return nil
	}
	return f.Conn.SetReadDeadline(t)
}
