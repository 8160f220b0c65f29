package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/output"
)

// globalOptions are the persistent flags every command shares.
type globalOptions struct {
	RuntimeEndpoint string
	ConfigFile      string
	RequestTimeout  time.Duration
	Verbose         int
	Output          string
	// Template is --template, the text -o go-template runs.
	Template string
}

// factory hands commands their dependencies: streams, global options and a
// way to reach the runtime. Tests build one around buffers and a mock.
type factory struct {
	Streams ioStreams
	Global  globalOptions
	Getenv  func(string) string
}

// getenv reads the environment through the factory (tests may leave Getenv
// nil: then nothing is set).
func (f *factory) getenv(key string) string {
	if f.Getenv == nil {
		return ""
	}
	return f.Getenv(key)
}

// Settings resolves endpoint, timeouts and config-file keys.
func (f *factory) Settings() (client.Settings, error) {
	settings, err := client.Resolve(client.Sources{
		FlagEndpoint: f.Global.RuntimeEndpoint,
		FlagConfig:   f.Global.ConfigFile,
		FlagTimeout:  f.Global.RequestTimeout,
		Getenv:       f.Getenv,
	})
	if err != nil {
		return settings, err
	}
	if settings.EndpointSource == client.SourceUsualSocket {
		_, _ = fmt.Fprintf(f.Streams.ErrOut, "crisp: no runtime endpoint configured; using %s\n", settings.RuntimeEndpoint) // the error stream is the last resort: a failed write there has nowhere to go
	}
	return settings, nil
}

// Client resolves settings and dials the runtime. The caller closes it.
func (f *factory) Client() (*client.Client, error) {
	settings, err := f.Settings()
	if err != nil {
		return nil, err
	}
	return client.Dial(settings)
}

// Verbosef prints a diagnostic line when -v was given at least level times.
func (f *factory) Verbosef(level int, format string, args ...any) {
	if f.Global.Verbose >= level {
		_, _ = fmt.Fprintf(f.Streams.ErrOut, "crisp: "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	}
}

// Command groups shown by `crisp --help`.
const (
	groupStreaming   = "streaming"
	groupInspection  = "inspection"
	groupImages      = "images"
	groupDiagnostics = "diagnostics"
	groupMock        = "mock"
)

func newRootCommand(f *factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "crisp",
		Short: "CRI streaming client and debugger: exec, attach, port-forward, probe",
		Long: `crisp talks to a CRI runtime (containerd, CRI-O, ...) like crictl does, and gets the
three streaming calls right: exec and attach with exit codes passed through and a
terminal that is always restored, port-forward that survives failed connections,
and probe/smoke/bench that show which streaming protocols a runtime speaks.

EXIT STATUS
  exec and attach pass the remote process's exit code through (0-255) and use
  125 for crisp's own failures; every other command exits
  0  success
  1  failure (runtime unreachable, no such container, ...)
  2  bad flags or arguments`,
		Example: `  crisp demo
  crisp ps
  crisp exec -it nginx sh
  crisp port-forward web 8080:80
  crisp probe nginx`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("request-timeout") && f.Global.RequestTimeout <= 0 {
				return usageErrorf("--request-timeout must be positive (e.g. 10s), not %s", f.Global.RequestTimeout)
			}
			// The config file's debug key means -v, as crictl's means --debug.
			// A broken file is reported by the commands that use it.
			if file, _, err := client.LoadConfigFile(client.Sources{FlagConfig: f.Global.ConfigFile, Getenv: f.Getenv}); err == nil {
				f.Global.Verbose = file.Verbosity(f.Global.Verbose, cmd.Flags().Changed("verbose"))
			}
			if _, err := output.ParseFormat(f.Global.Output); err != nil {
				return usageErrorf("-o/--output must be table, json, yaml or go-template, not %q", f.Global.Output)
			}
			return nil
		},
	}
	root.Version = crispVersion
	root.SetVersionTemplate("crisp {{.Version}}\n")
	root.SetIn(f.Streams.In)
	root.SetOut(f.Streams.Out)
	root.SetErr(f.Streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	pf := root.PersistentFlags()
	pf.StringVarP(&f.Global.RuntimeEndpoint, "runtime-endpoint", "r", "", "CRI runtime endpoint (unix:///path or tcp://host:port); default: CONTAINER_RUNTIME_ENDPOINT, the config file, then the usual sockets")
	pf.StringVarP(&f.Global.ConfigFile, "config", "c", "", "crictl-style YAML config file (default: CRI_CONFIG_FILE, then "+client.DefaultConfigFile+")")
	pf.DurationVar(&f.Global.RequestTimeout, "request-timeout", 0, "timeout of each gRPC call (default 10s, or the config file's timeout)")
	pf.CountVarP(&f.Global.Verbose, "verbose", "v", "-v shows the negotiated transport and protocol, -vv every frame")
	pf.StringVarP(&f.Global.Output, "output", "o", "table", "output format where output is data: table, json, yaml or go-template")
	pf.StringVar(&f.Global.Template, "template", "", "the Go template -o go-template runs over the JSON (crictl's functions: json, title, lower, upper)")

	root.AddGroup(
		&cobra.Group{ID: groupStreaming, Title: "Streaming:"},
		&cobra.Group{ID: groupInspection, Title: "Inspection:"},
		&cobra.Group{ID: groupImages, Title: "Images:"},
		&cobra.Group{ID: groupLifecycle, Title: "Pods and containers:"},
		&cobra.Group{ID: groupDiagnostics, Title: "Diagnostics:"},
		&cobra.Group{ID: groupMock, Title: "Mock runtime and demo:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add(groupStreaming, newExecCommand(f), newAttachCommand(f), newPortForwardCommand(f))
	add(groupInspection, newVersionCommand(f), newInfoCommand(f), newPodsCommand(f), newPsCommand(f),
		newInspectCommand(f), newInspectPodCommand(f), newImagesCommand(f), newInspectImageCommand(f),
		newStatsCommand(f), newPodStatsCommand(f), newImageFsInfoCommand(f), newEventsCommand(f), newRuntimeConfigCommand(f))
	add(groupImages, newPullCommand(f), newRmiCommand(f))
	add(groupLifecycle, newRunPodCommand(f), newCreateCommand(f), newStartCommand(f), newRunCommand(f),
		newStopCommand(f), newRmCommand(f), newStopPodCommand(f), newRmPodCommand(f),
		newUpdateCommand(f), newCheckpointCommand(f), newLogsCommand(f))
	add(groupDiagnostics, newProbeCommand(f), newSmokeCommand(f), newBenchCommand(f), newReportCommand(f), newTraceCommand(f))
	add(groupMock, newMockRuntimeCommand(f), newDemoCommand(f))
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newCompletionCommand(f), newGenDocsCommand(f))

	// Dynamic completion of the first argument from the runtime.
	for name, complete := range map[string]cobra.CompletionFunc{
		"exec": completeContainers(f), "attach": completeContainers(f), "inspect": completeContainers(f),
		"port-forward": completePods(f), "inspectp": completePods(f),
		"stats": completeContainers(f), "statsp": completePods(f),
		"start": completeContainers(f), "stop": completeContainers(f), "rm": completeContainers(f),
		"update": completeContainers(f), "checkpoint": completeContainers(f), "logs": completeContainers(f),
		"stopp": completePods(f), "rmp": completePods(f),
	} {
		if c, _, err := root.Find([]string{name}); err == nil && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = complete
		}
	}
	return root
}

// Main runs crisp with args and returns the process exit status.
func Main(args []string, streams ioStreams) int {
	quietKlog()
	ctx, stop := notifySignals(context.Background())
	defer stop()

	f := &factory{Streams: streams, Getenv: os.Getenv}
	code, cmd, err := execute(ctx, f, args)
	if err != nil && (code == exitUsage || (isPassThrough(cmd) && isUsage(err))) {
		name := "crisp"
		if cmd != nil {
			name = cmd.CommandPath()
		}
		_, _ = fmt.Fprintf(streams.ErrOut, "Run '%s --help' for usage.\n", name) // the error stream is the last resort: a failed write there has nowhere to go
	}
	return code
}

// execute runs one command line through a fresh command tree and returns
// the exit status, the command that ran (nil when none was found) and its
// error, whose line it has written to the error stream unless the command
// reported it already.
func execute(ctx context.Context, f *factory, args []string) (int, *cobra.Command, error) {
	root := newRootCommand(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK, cmd, nil
	}
	err = signalled(ctx, err)
	if !errors.Is(err, errReported) {
		msg := err.Error()
		if !strings.HasPrefix(msg, "crisp ") && !strings.HasPrefix(msg, "crisp:") {
			msg = "crisp: " + msg // not twice when the message names the command ("crisp port-forward needs ...")
		}
		_, _ = fmt.Fprintln(f.Streams.ErrOut, msg) // the error stream is the last resort: a failed write there has nowhere to go
	}
	return exitStatus(err, isPassThrough(cmd)), cmd, err
}

// isPassThrough says whether cmd passes the remote exit status through.
func isPassThrough(cmd *cobra.Command) bool {
	return cmd != nil && cmd.Annotations[passThroughAnnotation] == "true"
}

// errReported is returned (or wrapped) by a command that already printed its
// failure (for example a smoke report ending in "N passed, N failed"), so
// Main only sets the exit status.
var errReported = errors.New("failure already reported")

func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue) || isCobraUsageError(err)
}

// quietKlog stops client-go and the streaming libraries from printing their
// own log lines; crisp reports errors itself.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
