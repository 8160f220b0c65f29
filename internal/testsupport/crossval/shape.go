package crossval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Paths lists every path of the JSON document data with the type of its
// value, sorted: "status.metadata.attempt number". Object keys are joined
// with dots, the elements of an array share the path "[]" after it, and the
// types are JSON's: object, array, string, number, boolean, null. A path
// whose values have several types (one element a string, another null) is
// listed once per type. Several documents in a row (crictl's stats -w, or
// one JSON value per line) are read to the end and merged.
func Paths(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	seen := map[string]bool{}
	n := 0
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		walk(seen, "", v)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("not JSON: empty document")
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func walk(seen map[string]bool, path string, v any) {
	typ := "null"
	switch x := v.(type) {
	case map[string]any:
		typ = "object"
		for k, e := range x {
			walk(seen, strings.TrimPrefix(path+"."+k, "."), e)
		}
	case []any:
		typ = "array"
		for _, e := range x {
			walk(seen, path+"[]", e)
		}
	case string:
		typ = "string"
	case json.Number:
		typ = "number"
	case bool:
		typ = "boolean"
	}
	if path == "" {
		path = "."
	}
	seen[path+" "+typ] = true
}

// Difference is one path whose shape the two documents do not share: Want
// is the reference's types at Path ("" when it lacks the path), Got the
// other's.
type Difference struct {
	Path      string
	Want, Got string
}

func (d Difference) String() string {
	or := func(s string) string {
		if s == "" {
			return "absent"
		}
		return s
	}
	return fmt.Sprintf("%s: want %s, got %s", d.Path, or(d.Want), or(d.Got))
}

// Compare returns where got's shape differs from want's, by path, sorted;
// n is the number of paths compared (the union of both documents').
func Compare(want, got []byte) (diffs []Difference, n int, err error) {
	wp, err := Paths(want)
	if err != nil {
		return nil, 0, fmt.Errorf("reference: %w", err)
	}
	gp, err := Paths(got)
	if err != nil {
		return nil, 0, err
	}
	diffs, n = ComparePaths(wp, gp)
	return diffs, n, nil
}

// ComparePaths is Compare on the output of Paths.
func ComparePaths(want, got []string) ([]Difference, int) {
	types := func(paths []string) map[string][]string {
		m := map[string][]string{}
		for _, p := range paths {
			i := strings.LastIndexByte(p, ' ')
			m[p[:i]] = append(m[p[:i]], p[i+1:])
		}
		return m
	}
	w, g := types(want), types(got)
	all := map[string]bool{}
	for p := range w {
		all[p] = true
	}
	for p := range g {
		all[p] = true
	}
	var diffs []Difference
	for p := range all {
		wt, gt := strings.Join(w[p], "|"), strings.Join(g[p], "|")
		if wt != gt {
			diffs = append(diffs, Difference{Path: p, Want: wt, Got: gt})
		}
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].Path < diffs[j].Path })
	return diffs, len(all)
}
