package main

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/tracefile"
	"github.com/crisp-cri/crisp/internal/transport"
)

// traceOptions are --trace-file and --trace-bytes, shared by exec, attach,
// port-forward, probe and smoke. The file is opened when the first session
// is configured and closed when the command returns (closeAfter).
type traceOptions struct {
	File  string
	Bytes int

	w *tracefile.Writer
}

func (o *traceOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "trace-file", "", "write every handshake and frame to `FILE` as JSON lines (read it with crisp trace FILE)")
	fs.IntVar(&o.Bytes, "trace-bytes", tracefile.DefaultPayloadBytes, "with --trace-file: bytes of each frame's payload to keep (0: none)")
}

// closeAfter makes cmd close the trace file when its RunE returns, adding a
// failure to close (a full disk) to the command's error.
func (o *traceOptions) closeAfter(cmd *cobra.Command) {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if o.Bytes < 0 {
			return usageErrorf("--trace-bytes must not be negative")
		}
		err := run(c, args)
		if o.w != nil {
			err = errors.Join(err, o.w.Close())
			o.w = nil
		}
		return err
	}
}

// apply opens the trace file (once) and points cfg at it; without
// --trace-file it does nothing.
func (o *traceOptions) apply(cfg *transport.Config) error {
	if o.File == "" {
		return nil
	}
	if o.w == nil {
		w, err := tracefile.Create(o.File, o.Bytes)
		if err != nil {
			return err
		}
		o.w = w
	}
	cfg.TraceFile = o.w
	return nil
}
