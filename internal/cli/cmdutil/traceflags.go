package cmdutil

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/stream/transport"
)

// TraceFlags are --trace-file and --trace-bytes, shared by exec, attach,
// port-forward, probe and smoke. The file is opened when the first session
// is configured and closed when the command returns (closeAfter).
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

// CloseAfter makes cmd close the trace file when its RunE returns, adding a
// failure to close (a full disk) to the command's error.
func (o *TraceFlags) CloseAfter(cmd *cobra.Command) {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if o.Bytes < 0 {
			return UsageErrorf("--trace-bytes must not be negative")
		}
		err := run(c, args)
		if o.w != nil {
			err = errors.Join(err, o.w.Close())
			o.w = nil
		}
		return err
	}
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
