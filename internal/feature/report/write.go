package report

import (
	"io"

	"github.com/crisp-cri/crisp/internal/base/outfile"
	"github.com/crisp-cri/crisp/internal/cli/output"
)

// Formats are the formats Write takes.
var Formats = []string{"table", "markdown", "json", "yaml"}

// Write writes the merged fleet to out as a table, Markdown, JSON or YAML.
func (f *Fleet) Write(out io.Writer, format string) error {
	switch format {
	case "markdown":
		return f.WriteMarkdown(out)
	case "table":
		return f.WriteText(out)
	}
	return output.Printer{Out: out, Format: output.Format(format)}.Print(f, nil)
}

// WriteJUnitFile writes the JUnit XML (WriteJUnit) to a new file at path
// (outfile.Create: what sits there is replaced, never written through).
func (f *Fleet) WriteJUnitFile(path string) error {
	file, err := outfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	if err := f.WriteJUnit(file); err != nil {
		_ = file.Close() // the write error says more
		return err
	}
	return file.Close()
}
