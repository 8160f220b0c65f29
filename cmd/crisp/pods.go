package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// podsOptions are the flags of `crisp pods`.
type podsOptions struct {
	f *factory
	// now is the clock CREATED is measured against (tests pin it).
	now func() time.Time

	ID        string
	Name      string
	Namespace string
	State     string
	Labels    []string
	Quiet     bool
	NoTrunc   bool
	Last      int
	Latest    bool

	filter client.PodFilter
}

func newPodsCommand(f *factory) *cobra.Command {
	o := &podsOptions{f: f, now: time.Now}
	return podsCommand(o)
}

// podsCommand binds the command's flags to o; tests parse into their own o.
func podsCommand(o *podsOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pods [flags]",
		Short: "List pod sandboxes",
		Long: `List the runtime's pod sandboxes, newest first, as crictl pods does.

--name and --namespace are regular expressions; --label may be repeated and
every label must match. IDs are truncated in the table unless --no-trunc;
-q prints full IDs only; -o json and -o yaml print the runtime's full data.

EXIT STATUS
  0  the pods were listed (also when none matched)
  1  the runtime could not be reached or failed
  2  bad flags or arguments`,
		Example: `  crisp pods
  crisp pods --name '^web' --state ready
  crisp pods --namespace kube-system --label app=dns -o json
  crisp pods -q --label app=web`,
		Args: noArgs,
		RunE: completeValidateRun(o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.ID, "id", "", "only the pod with this ID or ID prefix")
	fl.StringVar(&o.Name, "name", "", "only pods whose name matches this regular expression")
	fl.StringVar(&o.Namespace, "namespace", "", "only pods whose namespace matches this regular expression")
	fl.StringVarP(&o.State, "state", "s", "", "only pods in this state: ready or notready")
	fl.StringArrayVar(&o.Labels, "label", nil, "only pods with this label, key=value (repeatable)")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "print pod IDs only")
	fl.BoolVar(&o.NoTrunc, "no-trunc", false, "do not truncate IDs")
	fl.IntVar(&o.Last, "last", 0, "only the N most recently created pods")
	fl.BoolVarP(&o.Latest, "latest", "l", false, "only the most recently created pod")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(client.PodStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete builds the filter from the flags.
func (o *podsOptions) Complete() error {
	var err error
	o.filter = client.PodFilter{ID: o.ID, State: o.State}
	if o.filter.Name, err = compileFilter("--name", o.Name); err != nil {
		return err
	}
	if o.filter.Namespace, err = compileFilter("--namespace", o.Namespace); err != nil {
		return err
	}
	if o.filter.Labels, err = client.ParseLabels(o.Labels); err != nil {
		return usageError{fmt.Errorf("--label: %w", err)}
	}
	if o.Latest {
		o.Last = 1
	}
	return nil
}

// Validate rejects bad input before the runtime is dialed.
func (o *podsOptions) Validate() error {
	if o.State != "" {
		if _, err := client.ParsePodState(o.State); err != nil {
			return usageError{fmt.Errorf("--state: %w", err)}
		}
	}
	if o.Last < 0 {
		return usageErrorf("--last must be 0 (all) or more, not %d", o.Last)
	}
	return validateQuiet(o.Quiet, o.f.Global.Output)
}

// Run lists the pods and prints them.
func (o *podsOptions) Run(ctx context.Context) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	pods, err := c.ListPods(ctx, o.filter)
	if err != nil {
		return err
	}
	pods = lastN(pods, o.Last)
	if o.Quiet {
		for _, p := range pods {
			fmt.Fprintln(o.f.Streams.Out, p.GetId())
		}
		return nil
	}
	data, err := protoData(&runtimeapi.ListPodSandboxResponse{Items: pods})
	if err != nil {
		return err
	}
	now := o.now()
	return printData(o.f.Streams.Out, o.f.Global.Output, data, func(w io.Writer) error {
		row(w, "POD ID", "CREATED", "STATE", "NAME", "NAMESPACE", "ATTEMPT")
		for _, p := range pods {
			md := p.GetMetadata()
			row(w, truncID(p.GetId(), o.NoTrunc), createdAgo(now, p.GetCreatedAt()), client.PodStateName(p.GetState()),
				md.GetName(), md.GetNamespace(), md.GetAttempt())
		}
		return nil
	})
}

// The helpers below are shared by the listing commands (pods, ps, images,
// inspect, inspectp).

// truncatedIDLength is how many characters of an ID tables show, as crictl.
const truncatedIDLength = 13

// truncID shortens an ID for a table, dropping a "sha256:" prefix first.
func truncID(id string, noTrunc bool) string {
	if noTrunc {
		return id
	}
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > truncatedIDLength {
		return id[:truncatedIDLength]
	}
	return id
}

// compileFilter compiles a regular-expression flag; empty means no filter.
func compileFilter(flagName, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usageErrorf("%s %q is not a regular expression: %v", flagName, expr, err)
	}
	return re, nil
}

// validateQuiet rejects -q together with -o json/yaml: IDs only and full
// data cannot both be printed.
func validateQuiet(quiet bool, output string) error {
	if quiet && output != "table" && output != "" {
		return usageErrorf("-q/--quiet prints IDs only; it cannot be combined with -o %s", output)
	}
	return nil
}

func lastN[T any](items []T, n int) []T {
	if n > 0 && len(items) > n {
		return items[:n]
	}
	return items
}

// protoData turns a CRI message into JSON as the CRI API spells it (camelCase
// fields, enum names), which printData indents or turns into YAML. Zero
// values are written too: SANDBOX_READY, CONTAINER_CREATED and attempt 0 are
// the enums' and ints' zero values, and must not vanish from the output.
func protoData(m proto.Message) (json.RawMessage, error) {
	data, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", m, err)
	}
	return data, nil
}

// createdAgo says how long ago a CRI timestamp (Unix nanoseconds) was, as
// crictl and docker do ("2 minutes ago").
func createdAgo(now time.Time, unixNano int64) string {
	if unixNano == 0 {
		return "Unknown"
	}
	return humanDuration(now.Sub(time.Unix(0, unixNano))) + " ago"
}

// humanDuration is docker's rough wording of a duration.
func humanDuration(d time.Duration) string {
	if s := int(d.Seconds()); s < 1 {
		return "Less than a second"
	} else if s == 1 {
		return "1 second"
	} else if s < 60 {
		return fmt.Sprintf("%d seconds", s)
	}
	if m := int(d.Minutes()); m == 1 {
		return "About a minute"
	} else if m < 60 {
		return fmt.Sprintf("%d minutes", m)
	}
	if h := int(math.Round(d.Hours())); h == 1 {
		return "About an hour"
	} else if h < 48 {
		return fmt.Sprintf("%d hours", h)
	} else if h < 24*7*2 {
		return fmt.Sprintf("%d days", h/24)
	} else if h < 24*30*2 {
		return fmt.Sprintf("%d weeks", h/24/7)
	} else if h < 24*365*2 {
		return fmt.Sprintf("%d months", h/24/30)
	}
	return fmt.Sprintf("%d years", int(d.Hours())/24/365)
}

// humanSize writes a byte count with three significant digits in SI units,
// as crictl images does ("1.41MB").
func humanSize(n uint64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	size := float64(n)
	i := 0
	for size >= 1000 && i < len(units)-1 {
		size /= 1000
		i++
	}
	return fmt.Sprintf("%.3g%s", size, units[i])
}
