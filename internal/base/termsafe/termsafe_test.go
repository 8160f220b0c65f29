package termsafe

import (
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain name-1.2":         "plain name-1.2",
		"s/\x1b]0;PWNED\a":       `s/\x1b]0;PWNED\x07`,
		"\x1b[2J":                `\x1b[2J`,
		"two\nlines\r":           `two\nlines\r`,
		"tab\there":              `tab\there`,
		"bidi\u202eevil":         `bidi\u202eevil`,
		"c1\u009bx":              `c1\x9bx`,
		"bad\xffutf8":            `bad\xffutf8`,
		"clip\x1b]52;c;aGk=\x07": `clip\x1b]52;c;aGk=\x07`,
		"unicode ok: żółw 日本":    "unicode ok: żółw 日本",
		"back\\slash stays":      `back\slash stays`,
		"line\u2028sep":          `line\u2028sep`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestText: a composed message keeps its lines and tabs; every other
// control from what it quotes is escaped.
func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                              "plain",
		"two\nlines\tand tab":                "two\nlines\tand tab",
		"name \x1b]0;PWNED\a\nnext":          "name \\x1b]0;PWNED\\x07\nnext",
		"forged\rline":                       `forged\rline`,
		"clip\x1b]52;c;aGk=\x07 \u202e \xff": `clip\x1b]52;c;aGk=\x07 \u202e \xff`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriter: a diagnostic stream keeps its lines, loses the controls.
func TestWriter(t *testing.T) {
	var b strings.Builder
	w := Writer{W: &b}
	n, err := w.Write([]byte("crisp: reason \x1b]0;X\a\n"))
	if err != nil || n != 21 || b.String() != "crisp: reason \\x1b]0;X\\x07\n" {
		t.Errorf("Write: %d, %v; wrote %q", n, err, b.String())
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("s/\x1b]0;x\a")
	f.Add("ok")
	f.Fuzz(func(t *testing.T, s string) {
		out := Printable(s)
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 || c == 0x7f {
				t.Fatalf("Printable(%q) = %q keeps control byte %#x", s, out, c)
			}
		}
		text := Text(s)
		for i := 0; i < len(text); i++ {
			if c := text[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				t.Fatalf("Text(%q) = %q keeps control byte %#x", s, text, c)
			}
		}
	})
}
