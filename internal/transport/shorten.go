package transport

import (
	"fmt"
	"strings"
)

// MaxShown is the longest value (a URL, a server's answer) a message shows
// whole; Shorten cuts longer ones.
const MaxShown = 300

// Shorten returns s for a message: whole when it is at most MaxShown bytes,
// else its head and tail around a note of how much was cut, so a runtime
// that hands back a 10 MB URL or error text does not flood the terminal.
func Shorten(s string) string {
	if len(s) <= MaxShown {
		return s
	}
	const head, tail = 200, 60
	cut := len(s) - head - tail
	return strings.ToValidUTF8(s[:head], "") + fmt.Sprintf("...[%d bytes cut]...", cut) + strings.ToValidUTF8(s[len(s)-tail:], "")
}

// ShortenIn returns err with every copy of the long value v in its message
// shortened (net/http quotes a request's whole URL in its errors); errors.Is
// and errors.As still see err.
func ShortenIn(err error, v string) error {
	if err == nil || len(v) <= MaxShown {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, v) {
		return err
	}
	return &shortened{err: err, msg: strings.ReplaceAll(msg, v, Shorten(v))}
}

type shortened struct {
	err error
	msg string
}

func (e *shortened) Error() string { return e.msg }
func (e *shortened) Unwrap() error { return e.err }
