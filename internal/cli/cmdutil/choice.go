package cmdutil

import (
	"fmt"
	"strings"
)

// ParseChoice checks the value s of flag (named with its dashes, "--way")
// against the values a command accepts, in the order its help gives them,
// and names them all when s is none of them. hint, when not empty, ends
// the message in parentheses (where the names come from, say).
func ParseChoice[T ~string](flag, s, hint string, choices ...T) (T, error) {
	names := make([]string, len(choices))
	for i, c := range choices {
		if string(c) == s {
			return c, nil
		}
		names[i] = string(c)
	}
	msg := fmt.Sprintf("unknown %s %q: use %s", flag, s, orList(names))
	if hint != "" {
		msg += " (" + hint + ")"
	}
	var zero T
	return zero, fmt.Errorf("%s", msg)
}

// orList is "a, b or c".
func orList(names []string) string {
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return strings.Join(names, ", ")
}
