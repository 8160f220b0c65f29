package tty

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestParseDetachKeys(t *testing.T) {
	tests := []struct {
		spec    string
		want    []byte
		wantErr string // substring of the error; "" means no error
	}{
		{spec: "", want: nil},
		{spec: DefaultDetachKeys, want: []byte{16, 17}},
		{spec: "ctrl-a", want: []byte{1}},
		{spec: "ctrl-z", want: []byte{26}},
		{spec: "ctrl-P,CTRL-q", want: []byte{16, 17}},
		{spec: "ctrl-@", want: []byte{0}},
		{spec: `ctrl-[,ctrl-\,ctrl-],ctrl-^,ctrl-_`, want: []byte{27, 28, 29, 30, 31}},
		{spec: "a", want: []byte{'a'}},
		{spec: "ctrl-x,e", want: []byte{24, 'e'}},
		{spec: "q,ctrl-c,Q", want: []byte{'q', 3, 'Q'}},
		{spec: "~,.", want: []byte{'~', '.'}},
		{spec: " ", want: []byte{' '}},
		{spec: "DEL", want: []byte{0x7f}},
		{spec: "ctrl-p,", wantErr: `key 2 "" is empty`},
		{spec: ",", wantErr: `key 1 "" is empty`},
		{spec: "ctrl-p,,ctrl-q", wantErr: `key 2 "" is empty`},
		{spec: "ctrl-p, ctrl-q", wantErr: `key 2 " ctrl-q" is not a key`},
		{spec: "ctrl-", wantErr: `key 1 "ctrl-" is not a key`},
		{spec: "ctrl-pq", wantErr: "more than one character after ctrl-"},
		{spec: "ctrl-1", wantErr: "names no control key (ctrl-1)"},
		{spec: "ctrl-`", wantErr: "names no control key"},
		{spec: "ctrl-é", wantErr: "more than one character after ctrl-"},
		{spec: "é", wantErr: `"é" is not a key`},
		{spec: "\x10", wantErr: "not a printable character"},
		{spec: "\x7f", wantErr: "not a printable character"},
		{spec: "ab", wantErr: `"ab" is not a key`},
		{spec: "del", wantErr: "is not a key"},
		{spec: "alt-x", wantErr: "is not a key"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := ParseDetachKeys(tc.spec)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseDetachKeys(%q) = %v, want an error containing %q", tc.spec, got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "ctrl-p,ctrl-q") {
					t.Fatalf("ParseDetachKeys(%q) error %q: want it to contain %q and an example", tc.spec, err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("ParseDetachKeys(%q) returned keys %v with its error", tc.spec, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDetachKeys(%q): %v", tc.spec, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseDetachKeys(%q) mismatch (-want +got):\n%s", tc.spec, diff)
			}
		})
	}
}

// formatDetachKeys is ParseDetachKeys' inverse (lower-case letters), for the round-trip fuzz test.
func formatDetachKeys(keys []byte) string {
	items := make([]string, len(keys))
	for i, c := range keys {
		switch {
		case c == 0x7f:
			items[i] = "DEL"
		case c < 0x20:
			items[i] = "ctrl-" + strings.ToLower(string(rune(c|0x40)))
		default:
			items[i] = string(rune(c))
		}
	}
	return strings.Join(items, ",")
}

func FuzzParseDetachKeys(f *testing.F) {
	// Seeds are also checked in under testdata/fuzz/FuzzParseDetachKeys.
	for _, s := range []string{"", DefaultDetachKeys, "ctrl-@,ctrl-_", "a,b", ",", "ctrl-", "ctrl-é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		keys, err := ParseDetachKeys(spec)
		if err != nil {
			if keys != nil {
				t.Fatalf("ParseDetachKeys(%q) returned keys %v with error %v", spec, keys, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", spec)) {
				t.Fatalf("ParseDetachKeys(%q) error %q does not quote the specification", spec, err)
			}
			return
		}
		if spec == "" {
			if keys != nil {
				t.Fatalf(`ParseDetachKeys("") = %v, want nil (disabled)`, keys)
			}
			return
		}
		if n := strings.Count(spec, ",") + 1; len(keys) != n {
			t.Fatalf("ParseDetachKeys(%q) = %v: %d keys for %d items", spec, keys, len(keys), n)
		}
		again, err := ParseDetachKeys(formatDetachKeys(keys))
		if err != nil || !bytes.Equal(again, keys) {
			t.Fatalf("round trip of %q through %q: %v, %v; want %v", spec, formatDetachKeys(keys), again, err, keys)
		}
	})
}

// readAll reads d to its end with a buffer of the given size and returns what was read and the
// final error. It closes d first, so that Read does not hold after detaching (the session's owner
// would do that from another goroutine; TestDetachReaderHoldsUntilClose covers it).
func readAll(t *testing.T, d *DetachReader, bufSize int) ([]byte, error) {
	t.Helper()
	_ = d.Close() // never fails
	var out []byte
	buf := make([]byte, bufSize)
	for i := 0; ; i++ {
		n, err := d.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
		if i > 1<<20 {
			t.Fatalf("no end after %d reads; read %q", i, out)
		}
	}
}

func TestDetachReader(t *testing.T) {
	pq := []byte{16, 17}
	tests := []struct {
		name     string
		keys     []byte
		in       string
		want     string
		detached bool
	}{
		{name: "plain", keys: pq, in: "hello world", want: "hello world"},
		{name: "empty", keys: pq, in: "", want: ""},
		{name: "detach", keys: pq, in: "ab\x10\x11cd", want: "ab", detached: true},
		{name: "detach first", keys: pq, in: "\x10\x11", want: "", detached: true},
		{name: "partial then other key", keys: pq, in: "\x10x\x11", want: "\x10x\x11"},
		{name: "partial at end", keys: pq, in: "ab\x10", want: "ab\x10"},
		{name: "second key alone", keys: pq, in: "\x11\x11", want: "\x11\x11"},
		{name: "repeated first key", keys: pq, in: "\x10\x10\x11rest", want: "\x10", detached: true},
		{name: "many first keys", keys: pq, in: "\x10\x10\x10\x10\x11", want: "\x10\x10\x10", detached: true},
		{name: "only first occurrence counts", keys: pq, in: "x\x10\x11y\x10\x11", want: "x", detached: true},
		{name: "overlapping aab", keys: []byte("aab"), in: "aaab", want: "a", detached: true},
		{name: "overlapping abab", keys: []byte("abab"), in: "abaababab", want: "aba", detached: true},
		{name: "overlapping no match", keys: []byte("abab"), in: "abaabax", want: "abaabax"},
		{name: "single key", keys: []byte{3}, in: "12\x0334", want: "12", detached: true},
		{name: "disabled", keys: nil, in: "\x10\x11", want: "\x10\x11"},
	}
	for _, tc := range tests {
		for _, mode := range []struct {
			name    string
			wrap    func(io.Reader) io.Reader
			bufSize int
		}{
			{"whole", func(r io.Reader) io.Reader { return r }, 64},
			{"one byte reads", iotest.OneByteReader, 64},
			{"data with EOF", iotest.DataErrReader, 64},
			{"one byte buffer", func(r io.Reader) io.Reader { return r }, 1},
			{"half reads", iotest.HalfReader, 3},
		} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				calls := 0
				d := NewDetachReader(mode.wrap(strings.NewReader(tc.in)), tc.keys, func() { calls++ })
				got, err := readAll(t, d, mode.bufSize)
				if string(got) != tc.want {
					t.Errorf("read %q, want %q", got, tc.want)
				}
				wantErr, wantCalls := io.EOF, 0
				if tc.detached {
					wantErr, wantCalls = ErrDetached, 1
				}
				if !errors.Is(err, wantErr) {
					t.Errorf("final error %v, want %v", err, wantErr)
				}
				if calls != wantCalls || d.Detached() != tc.detached {
					t.Errorf("onDetach called %d times, Detached() = %v; want %d, %v", calls, d.Detached(), wantCalls, tc.detached)
				}
			})
		}
	}
}

// TestDetachReaderConforms runs the standard library's io.Reader checks on input without the sequence.
func TestDetachReaderConforms(t *testing.T) {
	content := []byte(strings.Repeat("some \x10input\x10 with first keys \x10", 100))
	if err := iotest.TestReader(NewDetachReader(bytes.NewReader(content), []byte{16, 17}, nil), content); err != nil {
		t.Fatal(err)
	}
}

// TestDetachReaderError: an error from the underlying reader comes after the data and any held key.
func TestDetachReaderError(t *testing.T) {
	boom := errors.New("boom")
	d := NewDetachReader(io.MultiReader(strings.NewReader("ab\x10"), iotest.ErrReader(boom)), []byte{16, 17}, nil)
	got, err := readAll(t, d, 8)
	if string(got) != "ab\x10" || !errors.Is(err, boom) {
		t.Fatalf("read %q, %v; want %q, %v", got, err, "ab\x10", boom)
	}
}

// TestDetachReaderHoldsUntilClose: after the sequence, Read returns ErrDetached only once Close
// has been called, and onDetach has run before that.
func TestDetachReaderHoldsUntilClose(t *testing.T) {
	detached := make(chan struct{})
	d := NewDetachReader(strings.NewReader("ab\x10\x11more"), []byte{16, 17}, func() { close(detached) })
	buf := make([]byte, 16)
	n, err := d.Read(buf)
	if string(buf[:n]) != "ab" || err != nil {
		t.Fatalf("first Read = %q, %v; want %q, nil", buf[:n], err, "ab")
	}
	<-detached // onDetach ran during the first Read

	var wg sync.WaitGroup
	var heldErr error
	wg.Go(func() { _, heldErr = d.Read(buf) })
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !errors.Is(heldErr, ErrDetached) {
		t.Fatalf("Read after Close = %v, want ErrDetached", heldErr)
	}
	if _, err := d.Read(buf); !errors.Is(err, ErrDetached) {
		t.Fatalf("Read again = %v, want ErrDetached", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// chunkReader returns data in chunks whose sizes come from sizes (cycled): 0 is an empty read,
// odd sizes return io.EOF with the last chunk rather than after it.
type chunkReader struct {
	data      []byte
	sizes     []byte
	i         int
	lastEmpty bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	size := 1
	if len(r.sizes) > 0 {
		size = int(r.sizes[r.i%len(r.sizes)]) % 11
		r.i++
	}
	if size == 0 && !r.lastEmpty {
		r.lastEmpty = true
		return 0, nil
	}
	r.lastEmpty = false
	size = max(size, 1)
	n := copy(p, r.data[:min(size, len(r.data))])
	r.data = r.data[n:]
	if len(r.data) == 0 && size%2 == 1 {
		return n, io.EOF
	}
	return n, nil
}

func FuzzDetachReader(f *testing.F) {
	// Seeds are also checked in under testdata/fuzz/FuzzDetachReader.
	f.Add([]byte("hello\x10\x11world"), []byte{16, 17}, []byte{3, 0, 4}, uint8(5))
	f.Add([]byte("\x10\x10\x10\x11"), []byte{16, 17}, []byte{1}, uint8(1))
	f.Add([]byte("aaabaab"), []byte("aab"), []byte{2, 7}, uint8(2))
	f.Add([]byte("no keys here"), []byte{}, []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, data, keys, sizes []byte, bufSize uint8) {
		if len(keys) > 16 {
			keys = keys[:16]
		}
		calls := 0
		d := NewDetachReader(&chunkReader{data: data, sizes: sizes}, keys, func() { calls++ })
		got, err := readAll(t, d, 1+int(bufSize)%32)

		want, wantErr, wantCalls := data, io.EOF, 0
		if i := bytes.Index(data, keys); len(keys) > 0 && i >= 0 {
			want, wantErr, wantCalls = data[:i], ErrDetached, 1
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("keys %q, data %q: read %q, want %q", keys, data, got, want)
		}
		if !errors.Is(err, wantErr) || calls != wantCalls {
			t.Fatalf("keys %q, data %q: error %v and %d onDetach calls, want %v and %d", keys, data, err, calls, wantErr, wantCalls)
		}
	})
}

func BenchmarkDetachReader(b *testing.B) {
	random := make([]byte, 32<<10)
	_, _ = rand.NewChaCha8([32]byte{}).Read(random) // never fails
	random = bytes.ReplaceAll(random, []byte{16, 17}, []byte{16, 16})
	for _, bc := range []struct {
		name  string
		chunk []byte
	}{
		{"text", bytes.Repeat([]byte("typed text "), 3<<10)},
		{"random bytes", random},
		{"all first keys", bytes.Repeat([]byte{16}, 32<<10)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			chunk := bc.chunk
			src := &repeatReader{chunk: chunk}
			d := NewDetachReader(src, []byte{16, 17}, nil)
			buf := make([]byte, len(chunk))
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				if _, err := d.Read(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// repeatReader returns chunk on every read, for ever.
type repeatReader struct{ chunk []byte }

func (r *repeatReader) Read(p []byte) (int, error) { return copy(p, r.chunk), nil }
