package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// crictl's global flags come before the verb and a verb's own after it, so
// one shorthand means two things: -r is the runtime endpoint before the
// verb and exec's transport, logs' reopen, ps' resolve-image-path or runp's
// runtime handler after it. cobra has one flag set for both places, so the
// flags before the verb are rewritten to crisp's long names first, and the
// verbs are free to give the shorthands their crictl meaning.

// globalsWithValue are the global flags that take a value, in every
// spelling that may come before the verb.
var globalsWithValue = map[string]string{
	"-r": "--runtime-endpoint", "--runtime-endpoint": "--runtime-endpoint",
	"-i": "--image-endpoint", "--image-endpoint": "--image-endpoint",
	"-t": "--request-timeout", "--timeout": "--request-timeout", "--request-timeout": "--request-timeout",
	"-c": "--config", "--config": "--config",
	"-o": "--output", "--output": "--output",
	"--template": "--template", "--max-retries": "--max-retries",
}

// crictlArgs rewrites the flags before the verb from crictl's spelling to
// crisp's: -r, -i and -t to their long names (-t/--timeout is crictl's
// request timeout: a duration, or seconds as a number; zero or less is the
// default, as crictl has it), and -v alone, with no verb, to --version. The
// verb and what follows it are left as they are.
func crictlArgs(args []string) []string {
	if len(args) > 1 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// A completion request: the words typed before the one being
		// completed, which stays as it is.
		last := len(args) - 1
		return append(append([]string{args[0]}, crictlArgs(args[1:last])...), args[last])
	}
	out := make([]string, 0, len(args))
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			break // the verb
		}
		name, value, hasValue := strings.Cut(a, "=")
		if !hasValue && len(a) > 2 && a[1] != '-' && globalsWithValue[a[:2]] != "" {
			name, value, hasValue = a[:2], a[2:], true // -rVALUE
		}
		long, takesValue := globalsWithValue[name]
		if !takesValue {
			out = append(out, a) // -D, -vv, -h, --version, an unknown flag cobra reports
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				out = append(out, a) // cobra says the value is missing
				continue
			}
			i++
			value = args[i]
		}
		if long == "--request-timeout" {
			var ok bool
			if value, ok = crictlTimeout(value); !ok {
				continue // zero or less: the default
			}
		}
		out = append(out, long+"="+value)
	}
	if i == len(args) {
		for j, a := range out {
			if a == "-v" {
				out[j] = "--version" // crictl -v prints the version
			}
		}
	}
	rest := slices.Clone(args[i:])
	if len(rest) > 0 && rest[0] == "exec" {
		execSwitches(rest[1:])
	}
	return append(out, rest...)
}

// execValueFlags are exec's flags that take a value as the next argument.
var execValueFlags = map[string]bool{
	"--timeout": true, "--transport": true, "-r": true, "--protocol": true, "--label": true, "--pod": true, "-p": true,
	"--name": true, "--image": true, "--state": true, "--last": true, "-n": true, "--tls-ca": true, "--tls-cert": true,
	"--tls-key": true, "--tls-server-name": true, "--tls-sni": true, "--record": true, "--trace-file": true,
}

// execSwitches rewrites crictl's exec -x/--parallel, a switch, to crisp's
// --parallel=8 when no number follows it (crisp's --parallel N counts
// the sessions at once), among exec's flags: up to "--" or the first
// argument that is not a flag's value (CONTAINER or the command).
func execSwitches(args []string) {
	for j, a := range args {
		isValue := j > 0 && execValueFlags[args[j-1]]
		if a == "--" || !strings.HasPrefix(a, "-") && !isValue {
			return
		}
		if !isValue && (a == "-x" || a == "--parallel") {
			if j+1 == len(args) {
				args[j] = "--parallel=8"
			} else if _, err := strconv.Atoi(args[j+1]); err != nil {
				args[j] = "--parallel=8"
			}
		}
	}
}

// crictlTimeout is a -t/--timeout value as --request-timeout takes it:
// seconds as a number become a duration; ok is false for zero or less.
func crictlTimeout(v string) (string, bool) {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return v + "s", n > 0
	}
	return v, !strings.HasPrefix(v, "-") && strings.Trim(v, "0.smhun") != ""
}
