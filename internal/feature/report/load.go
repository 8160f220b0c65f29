package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/crisp-cri/crisp/internal/base/input"
)

// Load reads and merges the reports in the named inputs ("-" is stdin),
// in order. It fails when an input cannot be read or when no input holds a
// report (a wrong file, or kubectl logs of pods that printed nothing); one
// input without a report among others that have one is a Problem (a node
// whose report file is empty has not shown that it works). A wait for input
// (a FIFO without a writer, a silent pipe) ends with ctx's cause when ctx
// ends.
func Load(ctx context.Context, names []string, stdin io.Reader) (*Fleet, error) {
	var docs []Doc
	var problems []Problem
	empty := 0
	for _, name := range names {
		var r io.Reader
		if name == "-" {
			r = input.Reader(ctx, stdin)
		} else {
			f, err := input.Open(ctx, name)
			if err != nil {
				return nil, err
			}
			defer func() { _ = f.Close() }() // read only: a close error loses nothing
			r = f
		}
		d, p, err := Decode(name, r)
		if err != nil {
			return nil, err
		}
		if len(d) == 0 && len(p) == 0 {
			p = append(p, Problem{Source: name, Err: "no smoke or probe report in it"})
			empty++
		}
		docs, problems = append(docs, d...), append(problems, p...)
	}
	if empty == len(names) {
		return nil, fmt.Errorf("no smoke or probe JSON report in %s (make them with `crisp smoke -o json`, `crisp probe -o json` or `crisp doctor -o json`)", strings.Join(names, ", "))
	}
	return Merge(docs, problems), nil
}

// ErrFailed is returned by Check when a node failed or a report could not be read.
var ErrFailed = errors.New("a node failed")

// Check returns nil when the fleet passed, else an error saying how it failed.
func (f *Fleet) Check() error {
	if f.OK() {
		return nil
	}
	return fmt.Errorf("%w: %d failures (failed checks and unreadable reports): %s", ErrFailed, f.Failures(), f.Verdict())
}
