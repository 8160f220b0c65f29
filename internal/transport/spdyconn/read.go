package spdyconn

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"

	"github.com/moby/spdystream/spdy"
)

// readLoop reads frames until the connection ends.
func (c *Conn) readLoop() {
	var err error
	for err == nil {
		err = c.readFrame()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = errClosed
	}
	c.sealAll()
	c.shut(err)
}

// readFrame reads one frame: a DATA payload into its stream's chunks, a
// control frame through the framer.
func (c *Conn) readFrame() error {
	if c.br.Buffered() < 8 {
		// The next header needs the network: hand what was read so far
		// to the streams' readers before waiting for more.
		c.sealAll()
		if c.burst >= bulkBurst && c.pause > 0 {
			// Bulk flow: the server sends faster than one frame at a
			// time; a moment's pause lets one read bring in many frames
			// instead of one wake-up per frame.
			time.Sleep(c.pause)
		}
		c.burst = 0
	}
	h, err := c.br.Peek(8)
	if err != nil {
		return err
	}
	c.touch()
	if h[0]&0x80 != 0 {
		f, err := c.framer.ReadFrame()
		if err != nil {
			return controlFrameError(err)
		}
		return c.control(f)
	}
	id := binary.BigEndian.Uint32(h[:4]) & 0x7fffffff
	fin := h[4]&byte(spdy.DataFlagFin) != 0
	n := int(h[5])<<16 | int(h[6])<<8 | int(h[7])
	c.burst += n
	_, _ = c.br.Discard(8) // Peek returned these 8
	s := c.stream(id)
	if s == nil {
		// A stream reset or removed here; its late data goes nowhere.
		_, err := c.br.Discard(n)
		return err
	}
	if err := s.receive(n); err != nil {
		return err
	}
	if fin {
		s.publish()
		s.remoteEnd(nil, io.EOF)
	}
	return nil
}

// sealAll publishes every chunk the read loop was filling (read loop only).
func (c *Conn) sealAll() {
	for _, s := range c.filling {
		s.listed = false
		s.publish()
	}
	c.filling = c.filling[:0]
}

// control acts on one control frame (read loop only).
func (c *Conn) control(f spdy.Frame) error {
	switch f := f.(type) {
	case *spdy.SynReplyFrame:
		if s := c.stream(uint32(f.StreamId)); s != nil {
			s.reply(nil)
			if f.CFHeader.Flags&spdy.ControlFlagFin != 0 {
				s.remoteEnd(nil, io.EOF)
			}
		}
	case *spdy.HeadersFrame:
		if s := c.stream(uint32(f.StreamId)); s != nil && f.CFHeader.Flags&spdy.ControlFlagFin != 0 {
			s.publish()
			s.remoteEnd(nil, io.EOF)
		}
	case *spdy.RstStreamFrame:
		if s := c.stream(uint32(f.StreamId)); s != nil {
			s.publish()
			c.forget(s)
			s.reply(ErrReset)
			s.remoteEnd(ErrReset, io.EOF)
		}
	case *spdy.PingFrame:
		if f.Id&1 == 0 { // the server's: echo it
			return c.writeControl(f)
		}
	case *spdy.GoAwayFrame:
		c.mu.Lock()
		c.goneAway = true
		c.mu.Unlock()
	case *spdy.SynStreamFrame:
		// The CRI servers open no streams; refuse one rather than leave it
		// waiting.
		return c.writeControl(&spdy.RstStreamFrame{StreamId: f.StreamId, Status: spdy.RefusedStream})
	}
	// SETTINGS, WINDOW_UPDATE and NOOP change nothing here.
	return nil
}

func (c *Conn) stream(id uint32) *Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[id]
}
