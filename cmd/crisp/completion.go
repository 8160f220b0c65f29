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

// completionShells maps each supported shell to its generator and the file
// name checked in under completions/.
var completionShells = []struct {
	name, file string
	gen        func(root *cobra.Command, w io.Writer) error
}{
	{"bash", "crisp.bash", func(r *cobra.Command, w io.Writer) error { return r.GenBashCompletionV2(w, true) }},
	{"zsh", "_crisp", func(r *cobra.Command, w io.Writer) error { return r.GenZshCompletion(w) }},
	{"fish", "crisp.fish", func(r *cobra.Command, w io.Writer) error { return r.GenFishCompletion(w, true) }},
	{"powershell", "crisp.ps1", func(r *cobra.Command, w io.Writer) error { return r.GenPowerShellCompletionWithDesc(w) }},
}

func newCompletionCommand(f *factory) *cobra.Command {
	names := make([]string, 0, len(completionShells))
	for _, s := range completionShells {
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
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range completionShells {
				if s.name == args[0] {
					return s.gen(cmd.Root(), f.Streams.Out)
				}
			}
			return usageErrorf("unknown shell %q: want %s", args[0], strings.Join(names, ", "))
		},
	}
}

// newGenDocsCommand writes man pages and completion scripts; hidden, for
// `make man` and `make completions`.
func newGenDocsCommand(f *factory) *cobra.Command {
	var manDir, completionDir string
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			root := cmd.Root()
			if manDir != "" {
				if err := os.MkdirAll(manDir, 0o755); err != nil {
					return err
				}
				header := &doc.GenManHeader{Title: "CRISP", Section: "1", Source: "crisp " + crispVersion, Date: &time.Time{}}
				if err := doc.GenManTree(root, header, manDir); err != nil {
					return fmt.Errorf("man pages: %w", err)
				}
			}
			if completionDir != "" {
				for _, s := range completionShells {
					out, err := os.Create(filepath.Join(completionDir, s.file))
					if err != nil {
						return err
					}
					if err := s.gen(root, out); err != nil {
						out.Close()
						return err
					}
					if err := out.Close(); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&manDir, "man", "", "write man pages into DIR")
	cmd.Flags().StringVar(&completionDir, "completions", "", "write completion scripts into DIR")
	return cmd
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
	defer c.Close()
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
