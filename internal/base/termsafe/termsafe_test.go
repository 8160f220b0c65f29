package termsafe

import "testing"

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
	})
}
