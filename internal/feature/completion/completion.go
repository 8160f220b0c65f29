// Package completion writes crisp's shell completion scripts and man pages
// and completes container, pod and image arguments with IDs and names read
// from the runtime. It knows cobra's command tree and the CRI client; it
// knows crisp's commands only by the names its caller gives it and by the
// flag names every command shares (-o, --pod, --image), and prints only to
// the writers it is given.
package completion

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/base/outfile"
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
# With -n CHARS the words are split at blanks only, as the package does, so
# that an image's "name:tag" or a "--flag=value" stays one word (bash's own
# COMP_WORDS splits at ':' and '=').
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    local __exclude="" __words __cword
    while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
        [ "$1" = -n ] && { __exclude=$2; shift; }
        shift
    done
    if [ -n "$__exclude" ] && [ -n "${COMP_LINE+set}" ]; then
        local __line=${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}
        read -ra __words <<<"$__line"
        case "$__line" in ""|*[[:space:]]) __words+=("") ;; esac
        __cword=$((${#__words[@]} - 1))
    else
        __words=("${COMP_WORDS[@]}")
        __cword=$COMP_CWORD
    fi
    local __cur="${__words[__cword]}" __prev="${__words[__cword-1]}"
    while [ $# -gt 0 ]; do
        case "$1" in
        cur) cur=$__cur ;;
        prev) prev=$__prev ;;
        words) words=("${__words[@]}") ;;
        cword) cword=$__cword ;;
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
# bash replaces only the part of the word after its last ':', so that part
# of cur is taken off each completion, as the package does.
if ! declare -F __ltrim_colon_completions >/dev/null 2>&1; then
__ltrim_colon_completions() {
    if [[ "$1" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
        local __colon_word=${1%"${1##*:}"} __i=${#COMPREPLY[*]}
        while [ $((--__i)) -ge 0 ]; do
            COMPREPLY[__i]=${COMPREPLY[__i]#"$__colon_word"}
        done
    fi
}
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
	out, err := outfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	if err := s.Gen(root, out); err != nil {
		_ = out.Close() // the generator's error is the one to report
		return err
	}
	return out.Close()
}
