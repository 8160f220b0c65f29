package session

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// RecordFlags are --record and --record-input (exec -t, attach -t): the
// session's terminal as an asciicast v2 file.
type RecordFlags struct {
	File  string
	Input bool

	rec *Recorder
}

// AddFlags binds --record and --record-input to fs.
func (o *RecordFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "record", "", "with -t: record the terminal session to `FILE` (asciicast v2, mode 0600; play it with asciinema)")
	fs.BoolVar(&o.Input, "record-input", false, "with --record: record what is typed too (off by default: input holds passwords)")
}

// Validate rejects --record-input without --record, and --record without
// -t on the command line (ttyGiven).
func (o *RecordFlags) Validate(ttyGiven bool) error {
	if o.Input && o.File == "" {
		return cmdutil.UsageErrorf("--record-input needs --record FILE")
	}
	if o.File != "" && !ttyGiven {
		return cmdutil.UsageErrorf("--record records a terminal session: use it with -t")
	}
	return nil
}

// Close closes the recording, if Start made one: a failure to write it (a
// full disk) is the error. The command's Run defers it.
func (o *RecordFlags) Close() error {
	if o.rec == nil {
		return nil
	}
	err := o.rec.Close()
	o.rec = nil
	return err
}

// Start creates the recording and makes d's sessions feed it: output, the
// terminal's sizes and, with --record-input, input. Without --record it
// does nothing.
func (o *RecordFlags) Start(d *Deps, command []string) error {
	if o.File == "" {
		return nil
	}
	env := map[string]string{}
	for _, k := range []string{"TERM", "SHELL"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	rec, err := NewRecorder(o.File, RecordOptions{Command: strings.Join(command, " "), Input: o.Input, Env: env})
	if err != nil {
		return err
	}
	o.rec = rec
	inner := d.Stream
	d.Stream = func(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, cfg transport.Config, s remotecommand.Streams) (remotecommand.Result, error) {
		s.Stdout = rec.Output(s.Stdout)
		s.Stdin = rec.Input(s.Stdin)
		if s.Resize != nil {
			s.Resize = recordSizes{q: s.Resize, rec: rec}
		}
		return inner(ctx, op, src, offers, cfg, s)
	}
	return nil
}

// recordSizes records every size the session sends.
type recordSizes struct {
	q   remotecommand.TerminalSizeQueue
	rec *Recorder
}

func (s recordSizes) Next() *remotecommand.TerminalSize {
	size := s.q.Next()
	if size != nil {
		s.rec.Resize(int(size.Width), int(size.Height))
	}
	return size
}
