// Package cmdutil holds what crisp's commands share and is not a command
// (kubectl's cmd/util in crisp's size): the factory that hands a command its
// streams, global options and runtime client; the usage error and the
// exit-status policy Main applies once; positional-argument checks and the
// parsing of shared flags. It knows cobra, the CRI client and the output
// formats; it writes only to the streams it is given and never exits.
package cmdutil

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// IOStreams are the standard streams a command talks through. Commands
// never touch os.Stdin/os.Stdout directly, so tests run them against
// buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTerminalIn reports whether In is an interactive terminal. Tests
	// replace it to exercise TTY decisions without a terminal.
	IsTerminalIn func() bool
}

// GlobalOptions are the persistent flags every command shares.
type GlobalOptions struct {
	RuntimeEndpoint string
	ImageEndpoint   string
	ConfigFile      string
	// Debug is -D/--debug: each CRI request and response on stderr.
	Debug bool
	// DebugGiven: -D/--debug was on the command line, so the config
	// file's debug key does not count.
	DebugGiven bool
	// MaxRetries is crictl's --max-retries; MaxRetriesGiven says the flag
	// was given (it then wins over the config file).
	MaxRetries      int
	MaxRetriesGiven bool
	RequestTimeout  time.Duration
	Verbose         int
	Output          string
	// Template is --template, the text -o go-template runs.
	Template string
}

// Factory hands commands their dependencies: streams, global options and a
// way to reach the runtime. Tests build one around buffers and a mock.
type Factory struct {
	Streams IOStreams
	Global  GlobalOptions
	Getenv  func(string) string
	// Dial makes the runtime client from the resolved settings; nil is
	// client.Dial. Every command's client comes through it (Client,
	// Dialer), so a test can hand out a fake or fail when one is asked for.
	Dial func(client.Settings) (*client.Client, error)
	// RunF, when set (tests), runs in place of every command's Run with
	// the command's options once Complete and Validate have passed: gh's
	// runF seam, for every command at once. Nothing is dialled unless
	// RunF dials.
	RunF func(opts any) error
}

// Env reads the environment through the factory (tests may leave Getenv
// nil: then nothing is set).
func (f *Factory) Env(key string) string {
	if f.Getenv == nil {
		return ""
	}
	return f.Getenv(key)
}

// Settings resolves endpoint, timeouts and config-file keys.
func (f *Factory) Settings() (client.Settings, error) {
	src := client.Sources{
		FlagEndpoint:      f.Global.RuntimeEndpoint,
		FlagImageEndpoint: f.Global.ImageEndpoint,
		FlagConfig:        f.Global.ConfigFile,
		FlagTimeout:       f.Global.RequestTimeout,
		Getenv:            f.Getenv,
	}
	if f.Global.MaxRetriesGiven {
		src.FlagMaxRetries = &f.Global.MaxRetries
	}
	settings, err := client.Resolve(src)
	if err != nil {
		return settings, err
	}
	if f.Global.Debug || settings.Debug && !f.Global.DebugGiven {
		settings.DebugOut = f.Streams.ErrOut
	}
	if settings.EndpointSource == client.SourceUsualSocket {
		_, _ = fmt.Fprintf(f.Streams.ErrOut, "crisp: no runtime endpoint configured; using %s\n", settings.RuntimeEndpoint) // the error stream is the last resort: a failed write there has nowhere to go
	}
	return settings, nil
}

// Dialer is the factory's client constructor (Dial, or client.Dial), for
// the features that resolve the settings themselves (sessions, probe).
func (f *Factory) Dialer() func(client.Settings) (*client.Client, error) {
	if f.Dial != nil {
		return f.Dial
	}
	return client.Dial
}

// Client resolves settings and dials the runtime. The caller closes it.
func (f *Factory) Client() (*client.Client, error) {
	settings, err := f.Settings()
	if err != nil {
		return nil, err
	}
	return f.Dialer()(settings)
}

// WithClient dials the runtime, runs do and closes the connection.
func (f *Factory) WithClient(do func(c *client.Client) error) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // closing a gRPC connection reports nothing to act on
	return do(c)
}

// Printer prints in the format -o and --template ask for.
func (f *Factory) Printer() output.Printer {
	return output.Printer{Out: f.Streams.Out, Format: output.Format(f.Global.Output), Template: f.Global.Template}
}

// PrinterOr is Printer with def as the format when -o was not given
// (inspect and info print JSON unless asked otherwise, as crictl does).
func (f *Factory) PrinterOr(cmd *cobra.Command, def output.Format) output.Printer {
	p := f.Printer()
	if fl := cmd.Flags().Lookup("output"); fl == nil || !fl.Changed {
		p.Format = def
	}
	return p
}
