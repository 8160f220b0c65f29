// Package output prints what crisp's data commands show: JSON and YAML in
// exactly the shapes crictl prints (same keys, same types), Go templates run
// over that JSON, and the human tables. It knows CRI messages and writers,
// not the runtime connection nor the command line. Tables and -v blocks
// escape what containers and runtimes named (termsafe.Printable); JSON,
// YAML and templates keep their bytes exact.
package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"text/template"

	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
)

// Format is an output format as -o spells it.
type Format string

// The formats -o accepts.
const (
	Table      Format = "table"
	JSON       Format = "json"
	YAML       Format = "yaml"
	GoTemplate Format = "go-template"
)

// Formats lists the formats in the order help shows them.
var Formats = []Format{Table, JSON, YAML, GoTemplate}

// ErrUnknownFormat is wrapped by Print's error for a format it does not
// know (root's -o check lets none through: this is a program error).
var ErrUnknownFormat = errors.New("unknown output format")

// Printer writes data in one format. Template is the go-template's text
// (-o go-template --template T).
type Printer struct {
	Out      io.Writer
	Format   Format
	Template string
}

// Print writes v (anything encoding/json can marshal, json.RawMessage
// included) as JSON, YAML or through the template, or calls table with a
// tab-aligned writer for the table format. A nil table means the data has
// no table: it is printed as JSON.
func (p Printer) Print(v any, table func(w io.Writer) error) error {
	switch p.Format {
	case Table, "":
		if table == nil {
			return p.json(v)
		}
		tw := NewTabWriter(p.Out)
		if err := table(tw); err != nil {
			return err
		}
		return tw.Flush()
	case JSON:
		return p.json(v)
	case YAML:
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
		// crictl prints its YAML with Println: a blank line ends it.
		_, err = p.Out.Write(append(data, '\n'))
		return err
	case GoTemplate:
		return p.template(v)
	}
	return fmt.Errorf("%w %q", ErrUnknownFormat, p.Format)
}

func (p Printer) json(v any) error {
	enc := json.NewEncoder(p.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// template runs the go-template over v's JSON (decoded into maps, as crictl
// does, so the template sees the JSON keys), with a missing key an error.
func (p Printer) template(v any) error {
	if strings.TrimSpace(p.Template) == "" {
		return errors.New("-o go-template needs --template")
	}
	tmpl, err := ParseTemplate(p.Template)
	if err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, raw); err != nil {
		return fmt.Errorf("--template: %w", err)
	}
	buf.WriteByte('\n')
	_, err = p.Out.Write(buf.Bytes())
	return err
}

// ParseTemplate parses a --template with crictl's functions (json, title,
// lower, upper); a key the data lacks is an error when it runs.
func ParseTemplate(text string) (*template.Template, error) {
	tmpl, err := template.New("--template").Funcs(template.FuncMap{
		"json":  templateJSON,
		"title": title,
		"lower": strings.ToLower,
		"upper": strings.ToUpper,
	}).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("--template: %w", err)
	}
	return tmpl, nil
}

func templateJSON(v any) (string, error) {
	data, err := json.Marshal(v)
	return string(data), err
}

// title upper-cases the first letter of every word (strings.Title without
// its deprecation).
func title(s string) string {
	prev := ' '
	return strings.Map(func(r rune) rune {
		defer func() { prev = r }()
		if prev == ' ' || prev == '\t' || prev == '\n' {
			return []rune(strings.ToUpper(string(r)))[0]
		}
		return r
	}, s)
}

// NewTabWriter is the aligned writer every table uses.
func NewTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
}

// Row writes tab-separated cells as one table line. Every cell goes
// through termsafe.Printable: table cells are names, labels, images and
// messages a container or runtime chose, and a tab or newline in one would
// break the table besides.
func Row(w io.Writer, cells ...any) {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(termsafe.Printable(fmt.Sprint(c)))
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(w, b.String()) // a table's writer is a buffer; its Flush reports errors
}
