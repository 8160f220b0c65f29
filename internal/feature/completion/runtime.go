package completion

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// Dial reaches the runtime for a completion; it must print nothing (a
// completion's output is read by the shell).
type Dial func() (*client.Client, error)

// Timeout keeps a tab press from hanging on a dead runtime.
const Timeout = 2 * time.Second

// Running restricts Containers to running containers: exec and attach
// reach nothing else.
var Running = []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_RUNNING}

// entry is one object a completion may name: by its ID, by its name (""
// when it has none, or several names for an image's tags), with a few words
// that tell it apart.
type entry struct {
	id    string
	names []string
	about string
	// live is a running container or a ready pod: of several sharing a
	// name, the one live one is what the name resolves to.
	live bool
}

// Containers offers container IDs and names read from the runtime, for the
// first positional argument; with states, only the containers in one of
// them.
func Containers(dial Dial, states ...runtimeapi.ContainerState) cobra.CompletionFunc {
	return firstArg(dial, "containers", func(ctx context.Context, c *client.Client) ([]entry, error) {
		resp, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
		var out []entry
		for _, ctr := range resp.GetContainers() {
			if len(states) > 0 && !slices.Contains(states, ctr.GetState()) {
				continue
			}
			out = append(out, entry{id: ctr.Id, names: nonEmpty(ctr.GetMetadata().GetName()),
				about: client.ContainerStateName(ctr.GetState()), live: ctr.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING})
		}
		return out, err
	})
}

// Pods offers pod sandbox IDs and names for the first positional argument.
func Pods(dial Dial) cobra.CompletionFunc {
	return firstArg(dial, "pods", listPods)
}

// Images offers the tags of the runtime's images, and their IDs once what
// is typed starts one, for every positional argument.
func Images(dial Dial) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return fromRuntime(cmd.Context(), dial, "images", toComplete, listImages)
	}
}

// Formats completes -o/--output.
func Formats() cobra.CompletionFunc {
	return cobra.FixedCompletions([]string{string(output.Table), string(output.JSON), string(output.YAML), string(output.GoTemplate)},
		cobra.ShellCompDirectiveNoFileComp)
}

// firstArg completes the first positional argument from the runtime, and
// the ones after it as files (create's config files, exec's command).
func firstArg(dial Dial, kind string, list func(context.Context, *client.Client) ([]entry, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return fromRuntime(cmd.Context(), dial, kind, toComplete, list)
	}
}

// EveryArg makes fn complete every positional argument as it does the
// first: for the commands that take several (inspect CONTAINER...).
func EveryArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return fn(cmd, nil, toComplete)
	}
}

func listPods(ctx context.Context, c *client.Client) ([]entry, error) {
	resp, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	var out []entry
	for _, p := range resp.GetItems() {
		about := client.PodStateName(p.GetState())
		if ns := p.GetMetadata().GetNamespace(); ns != "" {
			about += ", namespace " + ns
		}
		out = append(out, entry{id: p.Id, names: nonEmpty(p.GetMetadata().GetName()), about: about,
			live: p.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY})
	}
	return out, err
}

func listImages(ctx context.Context, c *client.Client) ([]entry, error) {
	resp, err := c.Images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	var out []entry
	for _, img := range resp.GetImages() {
		out = append(out, entry{id: img.Id, names: img.GetRepoTags(), about: "image"})
	}
	return out, err
}

// Register sets fn as the first-argument completion of the named
// subcommands of root that complete nothing yet.
func Register(root *cobra.Command, fn cobra.CompletionFunc, names ...string) {
	for _, name := range names {
		if c, _, err := root.Find([]string{name}); err == nil && c != root && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = fn
		}
	}
}

// RegisterFlag sets fn as the completion of the flag called flag on every
// command under root that has one (its own, not inherited) completing
// nothing yet, except the commands named in except.
func RegisterFlag(root *cobra.Command, flag string, fn cobra.CompletionFunc, except ...string) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if fl := c.LocalNonPersistentFlags().Lookup(flag); fl != nil && !slices.Contains(except, c.Name()) {
			if _, ok := c.GetFlagCompletionFunc(flag); !ok {
				_ = c.RegisterFlagCompletionFunc(flag, fn) // fails only when already registered, checked above
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// RegisterPersistentFlag sets fn as the completion of root's persistent
// flag called flag.
func RegisterPersistentFlag(root *cobra.Command, flag string, fn cobra.CompletionFunc) error {
	if root.PersistentFlags().Lookup(flag) == nil {
		return fmt.Errorf("no persistent flag --%s", flag)
	}
	return root.RegisterFlagCompletionFunc(flag, fn)
}

func fromRuntime(ctx context.Context, dial Dial, kind, prefix string,
	list func(context.Context, *client.Client) ([]entry, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := dial()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	defer func() { _ = c.Close() }() // closing a gRPC connection reports nothing to act on
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	items, err := list(ctx, c)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	return offer(kind, items, prefix, kind != "images"), cobra.ShellCompDirectiveNoFileComp
}

// offer is the completions of prefix among items: their IDs (always when
// allIDs, else only once the prefix starts one) and their names, each name
// once. A name that several objects share is offered once, described as
// such: offered once per object, with the object in the description, it
// made bash insert the common part of the described lines ("nc-sleep  (")
// into the command line.
func offer(kind string, items []entry, prefix string, allIDs bool) []cobra.Completion {
	byName := map[string][]entry{}
	var out []cobra.Completion
	for _, it := range items {
		if strings.HasPrefix(it.id, prefix) && (allIDs || prefix != "") {
			desc := it.about
			if len(it.names) > 0 {
				desc = strings.Join(it.names, ", ") + ", " + it.about
			}
			out = append(out, cobra.CompletionWithDesc(it.id, desc))
		}
		for _, name := range it.names {
			if strings.HasPrefix(name, prefix) {
				byName[name] = append(byName[name], it)
			}
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, cobra.CompletionWithDesc(name, describeName(kind, byName[name])))
	}
	return out
}

// describeName tells what a name stands for: its one object, the one live
// object of several (what the name resolves to), or that an ID must be
// given instead.
func describeName(kind string, set []entry) string {
	if len(set) == 1 {
		return client.ShortID(trimDigest(set[0].id)) + ", " + set[0].about
	}
	var live []entry
	for _, it := range set {
		if it.live {
			live = append(live, it)
		}
	}
	if len(live) == 1 {
		return fmt.Sprintf("%s, %s (%d more not running)", client.ShortID(live[0].id), live[0].about, len(set)-1)
	}
	ids := make([]string, len(set))
	for i, it := range set {
		ids[i] = client.ShortID(it.id)
	}
	sort.Strings(ids)
	return fmt.Sprintf("%d %s have this name; give an ID: %s", len(set), kind, strings.Join(ids, " "))
}

func trimDigest(id string) string { return strings.TrimPrefix(id, "sha256:") }

func nonEmpty(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}
