package session

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/client"
)

// colours cycle over the containers on a terminal (ANSI, bright and
// readable on dark and light backgrounds alike).
var colours = []string{"36", "33", "32", "35", "34", "31", "96", "93", "92", "95"}

// prefixes are "name | " for every target, names padded to one width so
// columns line up; a name used twice gets its ID's first characters. A
// container chose its name: it is escaped (termsafe.Printable), so that it
// cannot drive the terminal on every line the container prints.
func prefixes(targets []Target, colour bool) []string {
	names := make([]string, len(targets))
	seen := map[string]int{}
	for _, t := range targets {
		seen[t.Name]++
	}
	width := 0
	for i, t := range targets {
		names[i] = t.Name
		if names[i] == "" || seen[t.Name] > 1 {
			names[i] = strings.TrimSpace(t.Name + " " + client.ShortID(t.ID))
		}
		names[i] = termsafe.Printable(names[i])
		width = max(width, len(names[i]))
	}
	out := make([]string, len(targets))
	for i, n := range names {
		p := fmt.Sprintf("%-*s", width, n)
		if colour {
			p = "\x1b[" + colours[i%len(colours)] + "m" + p + "\x1b[0m"
		}
		out[i] = p + " | "
	}
	return out
}

// maxPartial bounds a line held back waiting for its newline: output
// without newlines is passed on in pieces this big.
const maxPartial = 64 * 1024

// lineWriter prefixes every line it is given and writes whole lines only,
// under a lock shared by all containers' writers.
type lineWriter struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	var out bytes.Buffer
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		out.WriteString(l.prefix)
		out.Write(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) >= maxPartial {
		out.WriteString(l.prefix)
		out.Write(l.buf)
		out.WriteByte('\n')
		l.buf = l.buf[:0]
	}
	if out.Len() == 0 {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes a last line that had no newline.
func (l *lineWriter) flush() {
	if len(l.buf) > 0 {
		l.writeLine(string(l.buf))
		l.buf = nil
	}
}

func (l *lineWriter) writeLine(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// An output error here has nowhere better to go than the result.
	_, _ = io.WriteString(l.w, l.prefix+s+"\n")
}
