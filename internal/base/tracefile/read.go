package tracefile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one line of a trace file: a line this long is not one
// crisp wrote.
const MaxLine = 1 << 20

// Decode reads a whole trace file. Blank lines are skipped; anything else
// that is not an event (bad JSON, an unknown kind, no time) is an error
// naming the line.
func Decode(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var events []Event
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			ev, derr := decodeLine(line)
			if derr != nil {
				return events, fmt.Errorf("line %d: %w", n, derr)
			}
			events = append(events, ev)
		}
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, fmt.Errorf("line %d: %w", n, err)
		}
	}
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLine {
			return nil, fmt.Errorf("longer than %d bytes: not a crisp trace", MaxLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

func decodeLine(line []byte) (Event, error) {
	var ev Event
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&ev); err != nil {
		return ev, fmt.Errorf("not a trace event: %w", err)
	}
	if dec.More() {
		return ev, errors.New("more than one JSON value on the line")
	}
	switch ev.Kind {
	case KindHandshake, KindFrame, KindClose, KindOpen, KindEnd:
	case "":
		return ev, errors.New(`no "kind"`)
	default:
		return ev, fmt.Errorf("unknown kind %q", ev.Kind)
	}
	if ev.Time.IsZero() {
		return ev, errors.New(`no "time"`)
	}
	if ev.Size < 0 {
		return ev, fmt.Errorf("negative size %d", ev.Size)
	}
	if ev.BytesSent < 0 || ev.BytesRecv < 0 {
		return ev, fmt.Errorf("negative byte count (sent %d, received %d)", ev.BytesSent, ev.BytesRecv)
	}
	return ev, nil
}
