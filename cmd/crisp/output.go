package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// printData writes v as JSON or YAML, or calls table for the table format.
// Every command whose output is data goes through here.
func printData(out io.Writer, format string, v any, table func(w io.Writer) error) error {
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	case "table", "":
		tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
		if err := table(tw); err != nil {
			return err
		}
		return tw.Flush()
	}
	return usageErrorf("unknown output format %q (want table, json or yaml)", format)
}

// row writes tab-separated cells as one table line.
func row(w io.Writer, cells ...any) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(w, "\t")
		}
		fmt.Fprint(w, c)
	}
	fmt.Fprintln(w)
}
