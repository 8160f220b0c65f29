// Package crossval holds crisp's output to crictl's: the same command run by
// both clients against the same runtime and objects must print JSON with the
// same paths, each holding a value of the same type (the values themselves
// differ: times, usage figures). Its tests run both against the mock runtime;
// internal/e2e/containerd runs the same cases against containerd 1.6 and 2.4.
package crossval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Objects are the runtime's objects the cases inspect: a running container,
// its pod, and an image the runtime holds.
type Objects struct {
	Container, Pod, Image string
}

// Case is one command both clients run: the same arguments for each (crisp
// takes crictl's names, argument order and flags).
type Case struct {
	Name string
	Args []string
	// YAML marks -o yaml output, turned into JSON before it is compared.
	YAML bool
}

// Cases are the data commands whose output crisp shares with crictl, each in
// JSON and in YAML. crictl's version has no -o, so it is not among them.
func Cases(o Objects) []Case {
	var out []Case
	for _, c := range []Case{
		{Name: "inspect", Args: []string{"inspect", o.Container}},
		{Name: "inspectp", Args: []string{"inspectp", o.Pod}},
		{Name: "inspecti", Args: []string{"inspecti", o.Image}},
		{Name: "info", Args: []string{"info"}},
		{Name: "ps", Args: []string{"ps", "-a"}},
		{Name: "ps-pod", Args: []string{"ps", "-p", o.Pod}},
		{Name: "pods", Args: []string{"pods"}},
		{Name: "images", Args: []string{"images"}},
		{Name: "stats", Args: []string{"stats", "-a"}},
		{Name: "stats-id", Args: []string{"stats", o.Container}},
		{Name: "statsp", Args: []string{"statsp"}},
		{Name: "imagefsinfo", Args: []string{"imagefsinfo"}},
	} {
		j, y := c, c
		j.Args = append(append([]string{}, c.Args[0], "-o", "json"), c.Args[1:]...)
		y.Name, y.YAML = c.Name+"-yaml", true
		y.Args = append(append([]string{}, c.Args[0], "-o", "yaml"), c.Args[1:]...)
		out = append(out, j, y)
	}
	return out
}

// Result is the comparison of one case's outputs.
type Result struct {
	Paths       int // paths compared: the union of both outputs'
	Differences []Difference
}

// Check compares crisp's output of c with crictl's. An error means one of
// them is not the format asked for.
func (c Case) Check(crictl, crisp []byte) (Result, error) {
	if c.YAML {
		var err error
		if crictl, err = yaml.YAMLToJSON(crictl); err != nil {
			return Result{}, fmt.Errorf("crictl's YAML: %w", err)
		}
		if crisp, err = yaml.YAMLToJSON(crisp); err != nil {
			return Result{}, fmt.Errorf("crisp's YAML: %w", err)
		}
	}
	diffs, n, err := Compare(crictl, crisp)
	if err != nil {
		return Result{}, fmt.Errorf("crisp's output: %w", err)
	}
	return Result{Paths: n, Differences: diffs}, nil
}

// String lists the differences one per line, crictl's shape as wanted.
func (r Result) String() string {
	var b strings.Builder
	for _, d := range r.Differences {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return b.String()
}

// EventsOf keeps the events of containerId id (a container or a pod) from
// the JSON documents events -o json streams, one compact document a line.
// An error means a document is cut short: read again later.
func EventsOf(stream []byte, id string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(stream))
	var out []byte
	for dec.More() {
		var ev map[string]any
		if err := dec.Decode(&ev); err != nil {
			return nil, err
		}
		if ev["containerId"] == id {
			line, err := json.Marshal(ev)
			if err != nil {
				return nil, err
			}
			out = append(append(out, line...), '\n')
		}
	}
	return out, nil
}
