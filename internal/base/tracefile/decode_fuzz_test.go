package tracefile

import (
	"bytes"
	"io"
	"testing"
)

// FuzzDecode: the trace decoder and printer never panic, whatever the file
// holds, and what decodes prints.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","session":1,"op":"exec","kind":"handshake","url":"http://h:1/exec/REDACTED","transport":"WebSocket","offered":["a"],"protocol":"a","status":101}` + "\n"))
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","session":1,"kind":"frame","dir":"recv","stream":"stdout","size":3,"data":"aGkK"}` + "\n"))
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","session":2,"kind":"close","by":"local"}`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := Print(io.Discard, events); err != nil {
			t.Fatal(err)
		}
		_ = Summarise(events)
	})
}
