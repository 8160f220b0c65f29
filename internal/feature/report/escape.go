package report

import (
	"strings"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
)

// Printable is termsafe.Printable: text from a report (node names, check
// names, details, errors) comes from other machines.
func Printable(s string) string { return termsafe.Printable(s) }

// cell is Printable text made safe for a Markdown table cell or list item:
// no pipe ends the cell, no HTML tag or entity starts, no backtick run
// opens code, no emphasis or link syntax takes effect.
func cell(s string) string {
	return mdEscaper.Replace(termsafe.Printable(s))
}

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
)
