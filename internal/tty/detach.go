package tty

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultDetachKeys is docker's (and crisp attach's) detach sequence.
const DefaultDetachKeys = "ctrl-p,ctrl-q"

// detachKeysHelp says what a detach-keys specification may contain; it ends every parse error.
const detachKeysHelp = `want comma-separated keys, each ctrl-<c> with <c> one of a-z @ [ \ ] ^ _, ` +
	`or a single character (e.g. ctrl-p,ctrl-q); "" disables detaching`

// ParseDetachKeys turns a docker-style detach-keys specification into the bytes a terminal sends
// for it: "ctrl-p,ctrl-q" is []byte{16, 17}. Each comma-separated key is ctrl-<c> (<c> a letter, in
// either case, or one of @ [ \ ] ^ _), a single printable ASCII character, or DEL. The empty
// specification means detaching is disabled and returns nil, nil. Anything else is an error that
// names the offending key.
func ParseDetachKeys(spec string) ([]byte, error) {
	if spec == "" {
		return nil, nil
	}
	items := strings.Split(spec, ",")
	keys := make([]byte, 0, len(items))
	for i, item := range items {
		b, err := parseKey(item)
		if err != nil {
			return nil, fmt.Errorf("invalid detach keys %q: key %d %q %w; %s", spec, i+1, item, err, detachKeysHelp)
		}
		keys = append(keys, b)
	}
	return keys, nil
}

// parseKey parses one key of a detach-keys specification.
func parseKey(key string) (byte, error) {
	switch {
	case key == "":
		return 0, errors.New("is empty (a comma too many?)")
	case key == "DEL":
		return 0x7f, nil
	case len(key) == 1:
		if c := key[0]; c >= 0x20 && c < 0x7f {
			return c, nil
		}
		return 0, errors.New("is not a printable character (write control keys as ctrl-<c>)")
	case len(key) > 5 && strings.EqualFold(key[:5], "ctrl-"):
		if len(key) != 6 {
			return 0, errors.New("has more than one character after ctrl-")
		}
		c := key[5]
		switch {
		case c >= 'a' && c <= 'z':
			return c - 'a' + 1, nil
		case c >= 'A' && c <= 'Z':
			return c - 'A' + 1, nil
		case c == '@', c >= '[' && c <= '_': // @ [ \ ] ^ _ are 0x40 and 0x5b-0x5f: ctrl clears bit 6
			return c &^ 0x40, nil
		}
		return 0, fmt.Errorf("names no control key (ctrl-%c)", c)
	}
	return 0, errors.New("is not a key")
}

// ErrDetached is what a DetachReader's Read returns, once released by Close, after the detach
// sequence was typed.
var ErrDetached = errors.New("detached")

// DetachReader passes a terminal's input through, watching for a detach sequence (see
// ParseDetachKeys). Bytes that might begin the sequence are held back until the next byte settles
// it: when the sequence does not complete they are passed on, in order, none lost. The sequence
// itself is never passed on; whatever was read after it in the same chunk is dropped (the user has
// detached). A held-back key reaches the remote side only when the next key is typed, as in docker.
//
// When the whole sequence has been read, Read returns what preceded it, calls onDetach (typically
// cancelling the session's context) and then, rather than report an error at once, blocks until
// Close is called before returning ErrDetached. That is on purpose: client-go's stdin copier closes
// the remote stdin when its reader fails, and with a TTY closing stdin ends the remote shell or,
// on containerd, the attach itself, while detaching must leave the process running; so the session
// is torn down by its context first and the copier is released afterwards by Close.
//
// Read and Close may be called from different goroutines; Read itself is for one reader at a time.
type DetachReader struct {
	r        io.Reader
	keys     []byte
	onDetach func()

	pos     int    // how many bytes of keys the input has matched so far; those are held back
	carry   []byte // output ready for the caller that did not fit its last buffer
	scratch []byte // backing store for output when bytes are held back or released
	err     error  // the underlying reader's error, reported once carry is delivered

	detached atomic.Bool
	release  chan struct{}
	once     sync.Once
}

// NewDetachReader returns a reader over r that detects keys (from ParseDetachKeys; nil or empty
// disables detection and passes everything through). onDetach, which may be nil, is called once,
// from Read, when the sequence is complete.
func NewDetachReader(r io.Reader, keys []byte, onDetach func()) *DetachReader {
	return &DetachReader{
		r:        r,
		keys:     bytes.Clone(keys),
		onDetach: onDetach,
		release:  make(chan struct{}),
	}
}

// Detached reports whether the detach sequence has been read.
func (d *DetachReader) Detached() bool { return d.detached.Load() }

// Close releases a Read held after detaching, which then returns ErrDetached. It does not close
// the underlying reader. It is safe to call more than once and from any goroutine.
func (d *DetachReader) Close() error {
	d.once.Do(func() { close(d.release) })
	return nil
}

// Read reads from the underlying reader into p, withholding the detach sequence as described on
// DetachReader.
func (d *DetachReader) Read(p []byte) (int, error) {
	if len(d.keys) == 0 {
		return d.r.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(d.carry) > 0 {
			n := copy(p, d.carry)
			d.carry = d.carry[n:]
			return n, nil
		}
		if d.detached.Load() {
			<-d.release
			return 0, ErrDetached
		}
		if d.err != nil {
			return 0, d.err
		}
		nr, err := d.r.Read(p)
		n := d.filter(p, nr)
		if err != nil {
			// Held-back bytes were not the sequence after all: the input ended.
			if !d.detached.Load() && d.pos > 0 {
				d.carry = append(d.carry, d.keys[:d.pos]...)
				d.pos = 0
			}
			d.err = err
		}
		if d.detached.Load() && d.onDetach != nil {
			d.onDetach()
			d.onDetach = nil
		}
		if n > 0 || nr == 0 && err == nil {
			// Deliver what there is; pass an empty read on as the underlying reader did.
			return n, nil
		}
		// Everything read was held back, or an error or the end is to be reported: go round.
	}
}

// filter scans p[:n], just read, for the sequence; it leaves the output in p and returns its
// length, keeping any output that does not fit in carry.
func (d *DetachReader) filter(p []byte, n int) int {
	chunk, keys, pos := p[:n], d.keys, d.pos
	if pos == 0 && bytes.IndexByte(chunk, keys[0]) < 0 {
		return n // the common case: nothing that could begin the sequence
	}
	out := d.scratch[:0]
	for i := 0; i < len(chunk); {
		if pos == 0 {
			// Copy up to the next byte that could begin the sequence in one go.
			j := bytes.IndexByte(chunk[i:], keys[0])
			if j < 0 {
				out = append(out, chunk[i:]...)
				break
			}
			out = append(out, chunk[i:i+j]...)
			i += j
		}
		c := chunk[i]
		i++
		if c == keys[pos] {
			pos++
			if pos == len(keys) {
				pos = 0
				d.detached.Store(true)
				break // the rest of the chunk was typed after detaching: dropped
			}
			continue
		}
		// Mismatch: of the held bytes plus c, keep the longest tail that still begins the
		// sequence (so "p p q" detaches on ctrl-p,ctrl-q) and release the rest.
		k := fallback(keys, pos, c)
		if k == 0 {
			out = append(out, keys[:pos]...)
			out = append(out, c)
		} else {
			out = append(out, keys[:pos+1-k]...)
		}
		pos = k
	}
	d.pos = pos
	d.scratch = out
	m := copy(p, out)
	d.carry = out[m:]
	return m
}

// fallback returns the length of the longest suffix of keys[:pos]+c that is a prefix of keys,
// given c != keys[pos]. Detach sequences are a few bytes long: the quadratic search is fine.
func fallback(keys []byte, pos int, c byte) int {
	for k := pos; k > 0; k-- {
		if keys[k-1] == c && bytes.Equal(keys[pos+1-k:pos], keys[:k-1]) {
			return k
		}
	}
	return 0
}
