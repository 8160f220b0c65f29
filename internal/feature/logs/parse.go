// Package logs reads container log files in the CRI log format, as kubelet
// does for `kubectl logs`: "TIMESTAMP STREAM TAG CONTENT" lines where tag P
// marks a partial line continued by the next one and F a full line; with
// tail, since, byte limit, timestamps, one stream, and follow across log
// rotation. Docker's JSON lines are read too. It knows files, not gRPC: the
// caller says whether the container still runs.
package logs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Streams a log line can belong to.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// timeFormatOut is how --timestamps prints a line's time (fixed width, as
// kubelet does); timeFormatIn parses any RFC 3339 precision.
const (
	timeFormatOut = "2006-01-02T15:04:05.000000000Z07:00"
	timeFormatIn  = "2006-01-02T15:04:05.999999999Z07:00"
)

// Message is one parsed log line.
type Message struct {
	Time   time.Time
	Stream string
	// Partial marks a fragment: the runtime split a long line, and the
	// next fragment continues it.
	Partial bool
	// Content is what the container wrote: a full line ends in "\n", a
	// partial one does not.
	Content []byte
}

// ParseLine parses one line of a log file (with or without its "\n"): the
// CRI format first, then Docker's JSON lines.
func ParseLine(line []byte) (Message, error) {
	msg, err := parseCRI(line)
	if err == nil {
		return msg, nil
	}
	if msg, jerr := parseDockerJSON(line); jerr == nil {
		return msg, nil
	}
	return Message{}, err
}

func parseCRI(line []byte) (Message, error) {
	var msg Message
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return msg, errors.New("no timestamp")
	}
	t, err := time.Parse(timeFormatIn, string(ts))
	if err != nil {
		return msg, fmt.Errorf("timestamp %q is not RFC 3339", ts)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return msg, errors.New("no stream")
	}
	if s := string(stream); s != Stdout && s != Stderr {
		return msg, fmt.Errorf("stream %q is neither stdout nor stderr", stream)
	}
	tags, content, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return msg, errors.New("no tag")
	}
	// Tags are ":"-separated; only the first (P or F) means anything yet.
	first, _, _ := bytes.Cut(tags, []byte{':'})
	msg = Message{Time: t, Stream: string(stream), Partial: string(first) == "P"}
	content = bytes.TrimSuffix(content, []byte{'\n'})
	if !msg.Partial {
		content = append(content[:len(content):len(content)], '\n')
	}
	msg.Content = content
	return msg, nil
}

func parseDockerJSON(line []byte) (Message, error) {
	var l struct {
		Log    string    `json:"log"`
		Stream string    `json:"stream"`
		Time   time.Time `json:"time"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return Message{}, err
	}
	if l.Stream != Stdout && l.Stream != Stderr {
		return Message{}, fmt.Errorf("stream %q is neither stdout nor stderr", l.Stream)
	}
	content := []byte(l.Log)
	return Message{Time: l.Time, Stream: l.Stream, Content: content,
		Partial: len(content) == 0 || content[len(content)-1] != '\n'}, nil
}
