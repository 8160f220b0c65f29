// This file runs one command in many containers at once (exec
// --label): a bounded number of sessions in flight, every output line
// prefixed with its container's name, the exit status the highest remote
// code (or crisp's own failure code), and a one-line summary. It knows
// neither CRI nor protocols: the caller hands it targets and a function
// that runs the command in one of them.

package session

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// Target is one container to run the command in.
type Target struct {
	ID   string
	Name string // shown as the line prefix
}

// RunFunc runs the command in t with its output on stdout and stderr. It
// returns the remote exit code, or an error when crisp could not run it.
type RunFunc func(ctx context.Context, t Target, stdout, stderr io.Writer) (code int, err error)

// FanOutOptions are how to run.
type FanOutOptions struct {
	// Parallel bounds the sessions in flight; 0 or less means all at once.
	Parallel int
	// Out and Err receive the prefixed lines and, on Err, the summary.
	Out, Err io.Writer
	// Color prefixes lines with a colour per container (a terminal).
	Color bool
}

// Result is what happened in one container.
type Result struct {
	Target
	Code int
	Err  error // crisp's failure; Code is meaningless then
}

// Outcome is the whole run.
type Outcome struct {
	Results []Result // in the order of the targets
}

// ExitCode is cmdutil.ExitCrispFailure if crisp failed anywhere, otherwise the highest
// remote exit code.
func (o Outcome) ExitCode() int {
	code := 0
	for _, r := range o.Results {
		if r.Err != nil {
			return cmdutil.ExitCrispFailure
		}
		code = max(code, r.Code)
	}
	return code
}

// Summary is the one line printed after the run: how many containers, how
// many exited 0, the non-zero codes, the failures.
func (o Outcome) Summary() string {
	ok, failed := 0, 0
	codes := map[int]int{}
	for _, r := range o.Results {
		switch {
		case r.Err != nil:
			failed++
		case r.Code == 0:
			ok++
		default:
			codes[r.Code]++
		}
	}
	parts := []string{fmt.Sprintf("%d exited 0", ok)}
	keys := make([]int, 0, len(codes))
	for c := range codes {
		keys = append(keys, c)
	}
	sort.Ints(keys)
	for _, c := range keys {
		parts = append(parts, fmt.Sprintf("%d exited %d", codes[c], c))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed (crisp)", failed))
	}
	return fmt.Sprintf("ran in %d container(s): %s; exit status %d", len(o.Results), strings.Join(parts, ", "), o.ExitCode())
}

// Run runs fn in every target, at most opts.Parallel at a time, and returns
// when all have ended. A cancelled ctx stops the ones not yet started (they
// count as failures).
func FanOut(ctx context.Context, targets []Target, opts FanOutOptions, fn RunFunc) Outcome {
	out := Outcome{Results: make([]Result, len(targets))}
	if len(targets) == 0 {
		return out
	}
	parallel := opts.Parallel
	if parallel <= 0 || parallel > len(targets) {
		parallel = len(targets)
	}
	pre := prefixes(targets, opts.Color)
	var outMu sync.Mutex // one lock for both streams: lines never interleave
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, t := range targets {
		out.Results[i].Target = t
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			out.Results[i].Err = fmt.Errorf("not started: %w", ctx.Err())
			continue
		}
		wg.Add(1)
		go func(i int, t Target) {
			defer wg.Done()
			defer func() { <-sem }()
			stdout := &lineWriter{w: opts.Out, mu: &outMu, prefix: pre[i]}
			stderr := &lineWriter{w: opts.Err, mu: &outMu, prefix: pre[i]}
			code, err := fn(ctx, t, stdout, stderr)
			stdout.flush()
			stderr.flush()
			if err != nil {
				stderr.writeLine("crisp: " + termsafe.Printable(oneLine(err.Error())))
			}
			out.Results[i].Code, out.Results[i].Err = code, err
		}(i, t)
	}
	wg.Wait()
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
