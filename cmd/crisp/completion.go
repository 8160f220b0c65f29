package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// completionShell is a supported shell: its generator and the file name
// checked in under completions/.
type completionShell struct {
	name, file string
	gen        func(root *cobra.Command, w io.Writer) error
}

// completionShells lists the supported shells.
func completionShells() []completionShell {
	return []completionShell{
		{"bash", "crisp.bash", genBash},
		{"zsh", "_crisp", func(r *cobra.Command, w io.Writer) error { return r.GenZshCompletion(w) }},
		{"fish", "crisp.fish", func(r *cobra.Command, w io.Writer) error { return r.GenFishCompletion(w, true) }},
		{"powershell", "crisp.ps1", func(r *cobra.Command, w io.Writer) error { return r.GenPowerShellCompletionWithDesc(w) }},
	}
}

// bashFallbacks stand in for the bash-completion package's functions that
// cobra's bash script calls, when that package is not installed (minimal
// images, macOS's bash): without them every TAB printed "command not found".
const bashFallbacks = `# Fallbacks for the bash-completion package's functions, when it is absent.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do [ "$1" = -n ] && shift; shift; done
    local __cur="${COMP_WORDS[COMP_CWORD]}" __prev="${COMP_WORDS[COMP_CWORD-1]}"
    while [ $# -gt 0 ]; do
        case "$1" in
        cur) cur=$__cur ;;
        prev) prev=$__prev ;;
        words) words=("${COMP_WORDS[@]}") ;;
        cword) cword=$COMP_CWORD ;;
        esac
        shift
    done
}
fi
if ! declare -F _filedir >/dev/null 2>&1; then
_filedir() {
    local IFS=$'\n'
    if [ "$1" = -d ]; then COMPREPLY+=($(compgen -d -- "$cur")); else COMPREPLY+=($(compgen -f -- "$cur")); fi
}
fi
if ! declare -F __ltrim_colon_completions >/dev/null 2>&1; then
__ltrim_colon_completions() { :; }
fi

`

// genBash is cobra's bash script (V2, with descriptions) with the
// fallbacks above in front.
func genBash(r *cobra.Command, w io.Writer) error {
	if _, err := io.WriteString(w, bashFallbacks); err != nil {
		return err
	}
	return r.GenBashCompletionV2(w, true)
}

// completionOptions are `crisp completion`'s argument and dependencies.
type completionOptions struct {
	Shell string

	root  *cobra.Command
	out   io.Writer
	shell *completionShell
}

func newCompletionCommand(f *factory) *cobra.Command {
	var names []string
	for _, s := range completionShells() {
		names = append(names, s.name)
	}
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script (container and pod names complete from the runtime)",
		ValidArgs: names,
		Example: `  source <(crisp completion bash)
  crisp completion zsh > "${fpath[1]}/_crisp"
  crisp completion fish > ~/.config/fish/completions/crisp.fish`,
		Long: `Print a completion script for the shell. Container arguments (exec, attach,
inspect) and pod arguments (port-forward, inspectp) complete with IDs and names
read from the runtime; the scripts are also checked in under completions/.

EXIT STATUS
  0  the script was printed
  2  unknown shell`,
		Args: exactArgs(1, "a shell (bash, zsh, fish or powershell)"),
		RunE: runOptions(f, &completionOptions{}),
	}
}

// Complete takes the shell from the arguments and the command tree from cmd.
func (o *completionOptions) Complete(f *factory, cmd *cobra.Command, args []string) error {
	o.Shell, o.root, o.out = args[0], cmd.Root(), f.Streams.Out
	return nil
}

// Validate rejects a shell crisp has no script for.
func (o *completionOptions) Validate() error {
	var names []string
	for _, s := range completionShells() {
		if s.name == o.Shell {
			o.shell = &s
			return nil
		}
		names = append(names, s.name)
	}
	return usageErrorf("unknown shell %q: want %s", o.Shell, strings.Join(names, ", "))
}

// Run prints the script.
func (o *completionOptions) Run(context.Context) error {
	return o.shell.gen(o.root, o.out)
}

// genDocsOptions are `crisp gen-docs`'s flags.
type genDocsOptions struct {
	ManDir, CompletionDir string

	root *cobra.Command
}

// newGenDocsCommand writes man pages and completion scripts; hidden, for
// `make man` and `make completions`.
func newGenDocsCommand(f *factory) *cobra.Command {
	o := &genDocsOptions{}
	cmd := &cobra.Command{
		Use:     "gen-docs [--man DIR] [--completions DIR]",
		Short:   "Generate man pages and completion scripts",
		Hidden:  true,
		Example: `  crisp gen-docs --man man/ --completions completions/`,
		Long: `Generate man pages (section 1) and the shell completion scripts.

EXIT STATUS
  0  written
  1  a file could not be written
  2  bad flags`,
		Args: noArgs,
		RunE: runOptions(f, o),
	}
	cmd.Flags().StringVar(&o.ManDir, "man", "", "write man pages into DIR")
	cmd.Flags().StringVar(&o.CompletionDir, "completions", "", "write completion scripts into DIR")
	return cmd
}

// Complete takes the command tree to document from cmd.
func (o *genDocsOptions) Complete(_ *factory, cmd *cobra.Command, _ []string) error {
	o.root = cmd.Root()
	return nil
}

// Validate accepts any folders: writing them is where errors show.
func (o *genDocsOptions) Validate() error { return nil }

// Run writes the man pages and the completion scripts.
func (o *genDocsOptions) Run(context.Context) error {
	if o.ManDir != "" {
		if err := os.MkdirAll(o.ManDir, 0o755); err != nil {
			return err
		}
		header := &doc.GenManHeader{Title: "CRISP", Section: "1", Source: "crisp " + crispVersion, Date: &time.Time{}}
		if err := doc.GenManTree(o.root, header, o.ManDir); err != nil {
			return fmt.Errorf("man pages: %w", err)
		}
	}
	if o.CompletionDir == "" {
		return nil
	}
	for _, s := range completionShells() {
		if err := writeCompletion(o.root, s, filepath.Join(o.CompletionDir, s.file)); err != nil {
			return err
		}
	}
	return nil
}

// writeCompletion writes one shell's script to path.
func writeCompletion(root *cobra.Command, s completionShell, path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := s.gen(root, out); err != nil {
		_ = out.Close() // the generator's error is the one to report
		return err
	}
	return out.Close()
}

// completionTimeout keeps a tab press from hanging on a dead runtime.
const completionTimeout = 2 * time.Second

// completeContainers offers container IDs (with names as descriptions) and
// names read from the runtime, for the first positional argument.
func completeContainers(f *factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return completeFromRuntime(cmd.Context(), f, toComplete, func(ctx context.Context, rt runtimeapi.RuntimeServiceClient) ([][2]string, error) {
			resp, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
			if err != nil {
				return nil, err
			}
			var out [][2]string
			for _, c := range resp.Containers {
				out = append(out, [2]string{c.Id, c.GetMetadata().GetName()})
			}
			return out, nil
		})
	}
}

// completePods offers pod sandbox IDs and names for the first argument.
func completePods(f *factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeFromRuntime(cmd.Context(), f, toComplete, func(ctx context.Context, rt runtimeapi.RuntimeServiceClient) ([][2]string, error) {
			resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
			if err != nil {
				return nil, err
			}
			var out [][2]string
			for _, p := range resp.Items {
				out = append(out, [2]string{p.Id, p.GetMetadata().GetName()})
			}
			return out, nil
		})
	}
}

func completeFromRuntime(ctx context.Context, f *factory, prefix string,
	list func(context.Context, runtimeapi.RuntimeServiceClient) ([][2]string, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	if ctx == nil {
		ctx = context.Background()
	}
	// Completion output must stay clean: no endpoint notice on stderr.
	quiet := *f
	quiet.Streams.ErrOut = io.Discard
	c, err := quiet.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	defer func() { _ = c.Close() }() // closing a gRPC connection reports nothing to act on
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	items, err := list(ctx, c.Runtime)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, it := range items {
		id, name := it[0], it[1]
		if strings.HasPrefix(id, prefix) {
			out = append(out, cobra.CompletionWithDesc(id, name))
		}
		if name != "" && strings.HasPrefix(name, prefix) {
			out = append(out, cobra.CompletionWithDesc(name, id))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
