package completion

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/base/outfile"
)

// crisp writes its own man pages rather than use cobra/doc: that package
// renders through a Markdown library (blackfriday) whose package init every
// crisp invocation paid, for a page generator only `make man` runs.

// writeManTree writes the section 1 page of cmd and of each documented
// command under it into dir, named like cobra's: crisp.1, crisp-exec.1.
func writeManTree(cmd *cobra.Command, version, dir string) error {
	for _, c := range cmd.Commands() {
		if documented(c) {
			if err := writeManTree(c, version, dir); err != nil {
				return err
			}
		}
	}
	var page bytes.Buffer
	writeManPage(&page, cmd, version)
	return writeFile(filepath.Join(dir, manName(cmd)+".1"), page.Bytes())
}

// writeFile writes data to a new file at path (outfile.Create: what sits
// there is replaced, never written through), mode 0644 like any man page.
func writeFile(path string, data []byte) error {
	f, err := outfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the write error says more
		return err
	}
	return f.Close()
}

// documented excludes what `crisp --help` does not list either: hidden and
// deprecated commands, help, and help topics without a Run.
func documented(c *cobra.Command) bool {
	return c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand()
}

func manName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// writeManPage writes one page. It has no date, so that the same tree
// always gives the same bytes.
func writeManPage(w *bytes.Buffer, cmd *cobra.Command, version string) {
	// cobra adds these flags only to the command it runs; the page should
	// list what that command's --help lists.
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()

	fmt.Fprintf(w, ".TH %s 1 \"\" %s\n", roffArg("CRISP"), roffArg("crisp "+version))
	// No hyphenation and no justification: option names must not break,
	// and filled help text reads better ragged.
	w.WriteString(".nh\n.ad l\n")
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", roff(manName(cmd)), roff(cmd.Short))
	fmt.Fprintf(w, ".SH SYNOPSIS\n\\fB%s\\fR\n", roff(cmd.UseLine()))
	w.WriteString(".SH DESCRIPTION\n")
	writeText(w, cmp.Or(cmd.Long, cmd.Short))
	writeFlags(w, "OPTIONS", cmd.NonInheritedFlags())
	writeFlags(w, "OPTIONS INHERITED FROM PARENT COMMANDS", cmd.InheritedFlags())
	if cmd.Example != "" {
		w.WriteString(".SH EXAMPLE\n.nf\n")
		writeLines(w, cmd.Example)
		w.WriteString(".fi\n")
	}

	var refs []string
	ref := func(c *cobra.Command) { refs = append(refs, `\fB`+roff(manName(c))+`\fR(1)`) }
	if cmd.HasParent() {
		ref(cmd.Parent())
	}
	for _, c := range cmd.Commands() {
		if documented(c) {
			ref(c)
		}
	}
	if len(refs) > 0 {
		fmt.Fprintf(w, ".SH SEE ALSO\n%s\n", strings.Join(refs, ",\n"))
	}
}

// writeText writes help text a paragraph (blank-line separated) at a time.
// Paragraphs are filled, except one with an indented line, such as the
// EXIT STATUS table, whose columns filling would run together.
func writeText(w *bytes.Buffer, text string) {
	for i, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if para = strings.Trim(para, "\n"); para == "" {
			continue // more than one blank line
		}
		if i > 0 {
			w.WriteString(".PP\n")
		}
		table := slices.ContainsFunc(strings.Split(para, "\n"), func(l string) bool {
			return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
		})
		if table {
			w.WriteString(".nf\n")
		}
		writeLines(w, para)
		if table {
			w.WriteString(".fi\n")
		}
	}
}

// writeFlags writes a section listing flags as pflag's help does:
// "-o, --output string", then the usage and a non-zero default.
func writeFlags(w *bytes.Buffer, title string, flags *pflag.FlagSet) {
	if !flags.HasAvailableFlags() {
		return
	}
	fmt.Fprintf(w, ".SH %s\n", title)
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		w.WriteString(".TP\n")
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			fmt.Fprintf(w, "\\fB\\-%s\\fR, ", roff(f.Shorthand))
		}
		fmt.Fprintf(w, "\\fB\\-\\-%s\\fR", roff(f.Name))
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			fmt.Fprintf(w, " \\fI%s\\fR", roff(varname))
			// The value the flag takes when given bare, as pflag shows it
			// (a count's +1 goes without saying).
			if f.NoOptDefVal != "" && f.Value.Type() != "count" {
				fmt.Fprintf(w, "[=%s]", roff(f.NoOptDefVal))
			}
		}
		w.WriteString("\n")
		switch f.DefValue {
		case "", "false", "0", "0s", "[]", "map[]", "<nil>":
		default:
			if f.Value.Type() == "string" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		writeLines(w, usage)
	})
}

// writeLines writes text line by line, escaped. A line that would start
// with '.' gets a zero-width \& in front, or roff would read it as a
// request (a leading ' is already \(aq).
func writeLines(w *bytes.Buffer, text string) {
	for line := range strings.SplitSeq(text, "\n") {
		line = roff(strings.TrimRight(line, " \t"))
		if strings.HasPrefix(line, ".") {
			w.WriteString(`\&`)
		}
		w.WriteString(line + "\n")
	}
}

// roffEscaper makes text literal: a backslash would start an escape, and
// -, ' and ` would print as hyphen and typographic quotes that a pasted
// command line does not accept.
var roffEscaper = strings.NewReplacer(`\`, `\e`, "-", `\-`, "'", `\(aq`, "`", `\(ga`)

func roff(s string) string { return roffEscaper.Replace(s) }

// roffArg quotes a macro argument, which ends at a double quote.
func roffArg(s string) string { return `"` + strings.ReplaceAll(roff(s), `"`, `\(dq`) + `"` }
