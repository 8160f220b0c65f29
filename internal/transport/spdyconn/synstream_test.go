package spdyconn

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/spdystream/spdy"
)

// spdystream's framer, as a server runs it, reads the SYN_STREAM frames
// crisp writes: several on one connection (one zlib stream), multi-valued
// headers, and a header block larger than one stored deflate block.
func TestSynStreamDecodes(t *testing.T) {
	frames := []struct {
		id      uint32
		headers http.Header
	}{
		{1, http.Header{"Streamtype": {"error"}}},
		{3, http.Header{"Streamtype": {"stdout"}, "X-Multi": {"a", "b"}}},
		{5, http.Header{"Streamtype": {"data"}, "Port": {"8080"}, "Requestid": {"0"}}},
		{7, http.Header{"X-Big": {strings.Repeat("v", 70<<10)}}},
	}
	var wire []byte
	for i, f := range frames {
		var err error
		if wire, err = appendSynStream(wire, f.id, f.headers, i == 0); err != nil {
			t.Fatal(err)
		}
	}
	reader, err := spdy.NewFramer(&bytes.Buffer{}, bytes.NewReader(wire))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range frames {
		got, err := reader.ReadFrame()
		if err != nil {
			t.Fatalf("stream %d: %v", want.id, err)
		}
		syn, ok := got.(*spdy.SynStreamFrame)
		if !ok {
			t.Fatalf("stream %d: read a %T", want.id, got)
		}
		if syn.StreamId != spdy.StreamId(want.id) || syn.CFHeader.Flags != 0 || syn.Priority != 0 {
			t.Errorf("stream %d: read id %d flags %d priority %d", want.id, syn.StreamId, syn.CFHeader.Flags, syn.Priority)
		}
		if diff := cmp.Diff(want.headers, syn.Headers); diff != "" {
			t.Errorf("stream %d headers (-want +got):\n%s", want.id, diff)
		}
	}
}

// The zlib stream opens with the dictionary's Adler-32 that spdystream's
// own compressor writes (a wrong one fails every session at its first
// stream).
func TestSynStreamDictionaryID(t *testing.T) {
	var w bytes.Buffer
	f, err := spdy.NewFramer(&w, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFrame(&spdy.SynStreamFrame{StreamId: 1, Headers: http.Header{"A": {"b"}}}); err != nil {
		t.Fatal(err)
	}
	// control header 8 bytes, stream IDs 8, priority and slot 2, then
	// the zlib header (2) and the dictionary ID (4).
	if got, want := w.Bytes()[20:24], zlibDictHeader[2:]; !bytes.Equal(got, want) {
		t.Errorf("spdystream's dictionary ID % x, crisp's % x", got, want)
	}
}
