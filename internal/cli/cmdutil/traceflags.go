package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/transport"
)

// TraceFlags are --trace-file and --trace-bytes, shared by exec, attach,
// port-forward, probe, smoke and bench. The file is opened when the first
// session is configured (Apply) and closed by the command's Run (Close).
type TraceFlags struct {
	File  string
	Bytes int
	Input bool

	w *tracefile.Writer
}

// AddFlags binds --trace-file and --trace-bytes to fs.
func (o *TraceFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "trace-file", "", "write every handshake and frame to `FILE` as JSON lines (read it with crisp trace FILE)")
	fs.IntVar(&o.Bytes, "trace-bytes", tracefile.DefaultPayloadBytes, "with --trace-file: bytes of each frame's payload to keep (0: none)")
	fs.BoolVar(&o.Input, "trace-input", false, "with --trace-file: keep what is sent on stdin too (off by default: input holds passwords)")
}

// Validate rejects a negative --trace-bytes.
func (o *TraceFlags) Validate() error {
	if o.Bytes < 0 {
		return UsageErrorf("--trace-bytes must not be negative")
	}
	return nil
}

// Close closes the trace file, if Apply opened it: a failure to close (a
// full disk) is the error. The command's Run defers it.
func (o *TraceFlags) Close() error {
	if o.w == nil {
		return nil
	}
	err := o.w.Close()
	o.w = nil
	return err
}

// Apply opens the trace file (once) and points cfg at it; without
// --trace-file it does nothing.
func (o *TraceFlags) Apply(cfg *transport.Config) error {
	if o.File == "" {
		return nil
	}
	if o.w == nil {
		w, err := tracefile.Create(o.File, o.Bytes, o.Input)
		if err != nil {
			return err
		}
		o.w = w
	}
	cfg.TraceFile = o.w
	return nil
}
