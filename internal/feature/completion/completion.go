// Package completion writes crisp's shell completion scripts and man pages
// and completes container and pod arguments with IDs and names read from the
// runtime. It knows cobra's command tree and the CRI client; it knows no
// command of crisp's by its flags, and prints only to the writers it is given.
package completion

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cri/client"
)

// Shell is a supported shell: its script generator and the file name the
// script is checked in under (completions/).
type Shell struct {
	Name, File string
	Gen        func(root *cobra.Command, w io.Writer) error
}

// Shells lists the supported shells.
func Shells() []Shell {
	return []Shell{
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

// ShellNames are the names of Shells, in order.
func ShellNames() []string {
	var names []string
	for _, s := range Shells() {
		names = append(names, s.Name)
	}
	return names
}

// FindShell returns the shell called name, or an error naming the shells
// there are.
func FindShell(name string) (Shell, error) {
	for _, s := range Shells() {
		if s.Name == name {
			return s, nil
		}
	}
	return Shell{}, fmt.Errorf("unknown shell %q: want %s", name, strings.Join(ShellNames(), ", "))
}

// WriteDocs writes root's man pages (section 1) into manDir and every
// shell's completion script into completionDir; an empty dir is skipped.
func WriteDocs(root *cobra.Command, version, manDir, completionDir string) error {
	if manDir != "" {
		if err := os.MkdirAll(manDir, 0o755); err != nil {
			return err
		}
		if err := writeManTree(root, version, manDir); err != nil {
			return fmt.Errorf("man pages: %w", err)
		}
	}
	if completionDir == "" {
		return nil
	}
	for _, s := range Shells() {
		if err := writeScript(root, s, filepath.Join(completionDir, s.File)); err != nil {
			return err
		}
	}
	return nil
}

// writeScript writes one shell's script to path.
func writeScript(root *cobra.Command, s Shell, path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := s.Gen(root, out); err != nil {
		_ = out.Close() // the generator's error is the one to report
		return err
	}
	return out.Close()
}

// Dial reaches the runtime for a completion; it must print nothing (a
// completion's output is read by the shell).
type Dial func() (*client.Client, error)

// Timeout keeps a tab press from hanging on a dead runtime.
const Timeout = 2 * time.Second

// Containers offers container IDs (with names as descriptions) and names
// read from the runtime, for the first positional argument.
func Containers(dial Dial) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return fromRuntime(cmd.Context(), dial, toComplete, func(ctx context.Context, rt runtimeapi.RuntimeServiceClient) ([][2]string, error) {
			resp, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
			var out [][2]string
			for _, c := range resp.GetContainers() {
				out = append(out, [2]string{c.Id, c.GetMetadata().GetName()})
			}
			return out, err
		})
	}
}

// Pods offers pod sandbox IDs and names for the first positional argument.
func Pods(dial Dial) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fromRuntime(cmd.Context(), dial, toComplete, func(ctx context.Context, rt runtimeapi.RuntimeServiceClient) ([][2]string, error) {
			resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
			var out [][2]string
			for _, p := range resp.GetItems() {
				out = append(out, [2]string{p.Id, p.GetMetadata().GetName()})
			}
			return out, err
		})
	}
}

// Register completes the first argument of the named subcommands of root
// that complete nothing yet: containers for containerCmds, pods for podCmds.
func Register(root *cobra.Command, dial Dial, containerCmds, podCmds []string) {
	set := func(names []string, fn cobra.CompletionFunc) {
		for _, name := range names {
			if c, _, err := root.Find([]string{name}); err == nil && c != root && c.ValidArgsFunction == nil {
				c.ValidArgsFunction = fn
			}
		}
	}
	set(containerCmds, Containers(dial))
	set(podCmds, Pods(dial))
}

func fromRuntime(ctx context.Context, dial Dial, prefix string,
	list func(context.Context, runtimeapi.RuntimeServiceClient) ([][2]string, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
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
