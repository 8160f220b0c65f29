// Package termsafe owns one rule for crisp's terminal output: every string
// that comes from a container or a runtime (file names, container and pod
// names, labels, a tar's stderr, a trace's fields, a report's details) is
// untrusted and must not drive the reader's terminal or a CI page. ESC, CSI,
// OSC (window titles, hyperlinks, clipboard writes), BEL, CR and LF (forged
// lines), the C1 controls, bidirectional overrides and invalid UTF-8 are
// shown as escapes instead of written as they are. Machine output (-o json,
// yaml) stays exact and does not pass through here.
package termsafe

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with every control character, bidirectional control
// and invalid byte written as a Go-style escape (\x1b, \n, \u202e, \xff),
// so that it shows as text and stays on one line. A backslash is left as
// it is: the escapes are for the eye, not for decoding.
func Printable(s string) string { return escape(s, false) }

// Text is Printable for a message crisp composed over several lines (an
// error, a diagnostic) that quotes untrusted strings: its line breaks and
// tabs stay as they are, every other control is escaped. Where a string
// stands alone (a table cell, a name, a prefix), use Printable.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if isPrintable(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			writeEscape(&b, `\x`, rune(s[i]), 2)
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case MustEscape(r):
			if r < 0x100 {
				writeEscape(&b, `\x`, r, 2)
			} else {
				writeEscape(&b, `\u`, r, 4)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// writeEscape writes prefix and r as digits hex digits.
func writeEscape(b *strings.Builder, prefix string, r rune, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xf])
	}
}

func isPrintable(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && (!keepLines || (c != '\n' && c != '\t'))) || c == 0x7f || c >= 0x80 {
			return isPrintableSlow(s, keepLines)
		}
	}
	return true
}

func isPrintableSlow(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if keepLines && (r == '\n' || r == '\t') {
			i += size
			continue
		}
		if (r == utf8.RuneError && size <= 1) || r == '\n' || r == '\r' || r == '\t' || MustEscape(r) {
			return false
		}
		i += size
	}
	return true
}

// MustEscape says whether r must not reach a terminal as it is: C0 and C1
// controls and DEL, the bidirectional embeddings,
// overrides and isolates (which reorder what follows them on the line),
// and the line and paragraph separators.
func MustEscape(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// Writer escapes (Text) everything written to W: for a stream of crisp's
// own diagnostic lines (-v, warnings, frame traces) that quote what a
// runtime or its streaming server said. Never for a container's output,
// which is the user's to see as it is.
type Writer struct{ W io.Writer }

// Write writes p escaped; it reports len(p) written when all of it went.
func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
