package cmdutil

import "testing"

type color string

// A flag's value is one of its choices, or an error that names them all.
func TestParseChoice(t *testing.T) {
	if c, err := ParseChoice("--color", "blue", "", color("red"), color("blue")); err != nil || c != "blue" {
		t.Errorf("blue: %q, %v", c, err)
	}
	for _, tc := range []struct{ hint, want string }{
		{"", `unknown --color "green": use red, blue or pink`},
		{"the paint's names", `unknown --color "green": use red, blue or pink (the paint's names)`},
	} {
		if _, err := ParseChoice("--color", "green", tc.hint, color("red"), color("blue"), color("pink")); err == nil || err.Error() != tc.want {
			t.Errorf("green: %v, want %s", err, tc.want)
		}
	}
}
