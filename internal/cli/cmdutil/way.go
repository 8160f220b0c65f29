package cmdutil

import (
	"github.com/spf13/cobra"
)

// Way is how a command gets into a container where it knows more than one
// way (cp: tar or root; debug: container or host). WayAuto takes the first
// of them that works, in the command's order.
type Way string

// WayAuto is --way's default: the command's ways in turn.
const WayAuto Way = "auto"

// WayFlag is a command's --way: Bind it with the command's ways, in auto's
// order, and Parse it in Validate.
type WayFlag struct {
	// Value is the flag as given.
	Value string
	ways  []Way
}

// Bind adds --way (default auto) to cmd and completes it with auto and
// ways.
func (w *WayFlag) Bind(cmd *cobra.Command, help string, ways ...Way) {
	w.ways = ways
	cmd.Flags().StringVar(&w.Value, "way", string(WayAuto), help)
	names := make([]string, 0, len(ways)+1)
	for _, way := range w.choices() {
		names = append(names, string(way))
	}
	_ = cmd.RegisterFlagCompletionFunc("way", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp)) // the flag was just added: no error to act on
}

// Parse checks the value: auto or one of the command's ways, else a usage
// error naming them.
func (w *WayFlag) Parse() (Way, error) {
	way, err := ParseChoice("--way", w.Value, "", w.choices()...)
	if err != nil {
		return "", UsageError{Err: err}
	}
	return way, nil
}

func (w *WayFlag) choices() []Way { return append([]Way{WayAuto}, w.ways...) }
