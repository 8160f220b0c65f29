package cmdutil

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// AddFlags binds the persistent flags every command shares to o.
func (o *GlobalOptions) AddFlags(pf *pflag.FlagSet) {
	// -r, -i and -t are crictl's shorthands before the verb only (after it
	// they are the verb's own: exec -r transport, exec -i stdin, ...):
	// Main rewrites them to these long names (see cmd/crisp/globals.go).
	pf.StringVar(&o.RuntimeEndpoint, "runtime-endpoint", "", "CRI runtime endpoint (unix:///path or tcp://host:port); default: CONTAINER_RUNTIME_ENDPOINT, the config file, then the usual sockets; -r before the verb")
	pf.StringVar(&o.ImageEndpoint, "image-endpoint", "", "CRI image service endpoint (default: IMAGE_SERVICE_ENDPOINT, the config file, then the runtime endpoint); -i before the verb")
	pf.BoolVarP(&o.Debug, "debug", "D", false, "print each CRI request and response to stderr, as crictl's --debug (also the config file's debug: true)")
	pf.IntVar(&o.MaxRetries, "max-retries", client.DefaultMaxRetries, "retries of a set endpoint that cannot be reached, 0.5s apart doubling to 5s, as crictl's (0: none, negative: until the request timeout; default: the config file's max-retries, then 3)")
	pf.StringVarP(&o.ConfigFile, "config", "c", "", "crictl-style YAML config file (default: CRI_CONFIG_FILE, then "+client.DefaultConfigFile+")")
	pf.DurationVar(&o.RequestTimeout, "request-timeout", 0, "timeout of each gRPC call (default 10s, or the config file's timeout); crictl's -t/--timeout before the verb")
	pf.CountVarP(&o.Verbose, "verbose", "v", "-v shows the negotiated transport and protocol, -vv every frame")
	pf.StringVarP(&o.Output, "output", "o", "table", "output format where output is data: table, json, yaml or go-template")
	pf.StringVar(&o.Template, "template", "", "the Go template -o go-template runs over the JSON (crictl's functions: json, title, lower, upper)")
}

// CompleteGlobals checks the shared flags of cmd, the command about to
// run, and takes -v from the config file's debug key when -v was not given.
func (f *Factory) CompleteGlobals(cmd *cobra.Command) error {
	if cmd.Flags().Changed("request-timeout") && f.Global.RequestTimeout <= 0 {
		return UsageErrorf("--request-timeout must be positive (e.g. 10s), not %s", f.Global.RequestTimeout)
	}
	f.Global.DebugGiven = cmd.Flags().Changed("debug")
	f.Global.MaxRetriesGiven = cmd.Flags().Changed("max-retries")
	// The config file's debug key means -v, as crictl's means --debug.
	// A broken file is reported by the commands that use it.
	if file, _, err := client.LoadConfigFile(client.Sources{FlagConfig: f.Global.ConfigFile, Getenv: f.Getenv}); err == nil {
		f.Global.Verbose = file.Verbosity(f.Global.Verbose, cmd.Flags().Changed("verbose"))
	}
	if f.Global.Output == "" {
		f.Global.Output = string(output.Table) // -o "" is the default
	}
	if formats := OutputFormats(cmd); !slices.Contains(formats, f.Global.Output) {
		return UsageErrorf("-o/--output must be %s, not %q", orList(formats), f.Global.Output)
	}
	return nil
}

// OutputFormatsAnnotation lists, comma-separated, the -o formats of a
// command that prints other ones than output.Formats (report and fleet add
// markdown; probe, smoke and bench have no go-template). Root's check reads
// it, so that a command needs no check of its own and no PersistentPreRunE,
// which would hide root's: cobra runs only the nearest one.
const OutputFormatsAnnotation = "crisp.output/formats"

// OutputFormats are the -o values cmd takes: its OutputFormatsAnnotation,
// else output.Formats.
func OutputFormats(cmd *cobra.Command) []string {
	if list := cmd.Annotations[OutputFormatsAnnotation]; list != "" {
		return strings.Split(list, ",")
	}
	formats := make([]string, len(output.Formats))
	for i, f := range output.Formats {
		formats[i] = string(f)
	}
	return formats
}

// FlagsFromEnv sets each of cmd's flags named in flagEnv that was not
// given from the environment variable it maps to, when that is set. The
// environment stands in for unset flags at run time, never as a flag
// default: help and completion scripts must not show credentials.
func (f *Factory) FlagsFromEnv(cmd *cobra.Command, flagEnv [][2]string) error {
	for _, fe := range flagEnv {
		flag, key := fe[0], fe[1]
		if v := f.Env(key); v != "" && !cmd.Flags().Changed(flag) {
			if err := cmd.Flags().Set(flag, v); err != nil {
				return UsageErrorf("%s=%q: %v", key, v, err)
			}
		}
	}
	return nil
}
