package spdyconn

import (
	"encoding/binary"
	"errors"
	"net/http"
	"strings"

	"github.com/moby/spdystream/spdy"
)

// SPDY/3 compresses every header block of a direction of a connection as
// one zlib stream primed with a dictionary, flushed after each block. A
// zlib stream may hold stored (uncompressed) deflate blocks, which any
// inflater reads like the others; writing those instead of compressing
// skips setting up a compressor, which spdystream's framer does on the
// first SYN_STREAM of each connection (~0.9 ms: a deflate state at best
// compression primed with the dictionary): every exec, attach and
// port-forward session paid it before its first stream went out. A client's
// header blocks are a few dozen bytes: compressing them saves nothing worth
// the time.

// zlibDictHeader opens the zlib stream: deflate with a 32 KiB window and
// the preset-dictionary flag (FCHECK makes the pair a multiple of 31),
// then the Adler-32 of SPDY/3's header dictionary (a test checks it
// against what spdystream's framer writes).
var zlibDictHeader = [...]byte{0x78, 0x20, 0xe3, 0xc6, 0xa7, 0xc2}

// maxStored is the most a stored deflate block holds.
const maxStored = 0xffff

// appendSynStream appends a SYN_STREAM frame for stream id with headers
// (no FIN, priority 0) to dst; first says whether the connection's header
// zlib stream starts with it.
func appendSynStream(dst []byte, id uint32, headers http.Header, first bool) ([]byte, error) {
	var block []byte
	block = binary.BigEndian.AppendUint32(block, uint32(len(headers)))
	for name, values := range headers {
		v := strings.Join(values, "\x00")
		block = binary.BigEndian.AppendUint32(block, uint32(len(name)))
		block = append(block, strings.ToLower(name)...)
		block = binary.BigEndian.AppendUint32(block, uint32(len(v)))
		block = append(block, v...)
	}
	var z []byte
	if first {
		z = append(z, zlibDictHeader[:]...)
	}
	for len(block) > 0 {
		n := min(len(block), maxStored)
		// BFINAL 0, BTYPE 00 (stored), padded to the byte; LEN, NLEN.
		z = append(z, 0, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		z = append(z, block[:n]...)
		block = block[n:]
	}
	// An empty stored block ends the frame's part, as zlib's sync flush
	// does: the inflater hands out what it holds when it reaches one,
	// instead of reading on for the next block past the frame's end.
	z = append(z, 0, 0, 0, 0xff, 0xff)
	length := 10 + len(z)
	if length > maxDataLength {
		return dst, errors.New("SPDY headers too large for one frame")
	}
	dst = append(dst, 0x80, spdy.Version, 0, byte(spdy.TypeSynStream)) // control bit and version, type
	dst = append(dst, 0, byte(length>>16), byte(length>>8), byte(length))
	dst = binary.BigEndian.AppendUint32(dst, id&0x7fffffff)
	dst = binary.BigEndian.AppendUint32(dst, 0) // associated-to stream
	dst = append(dst, 0, 0)                     // priority, slot
	return append(dst, z...), nil
}
