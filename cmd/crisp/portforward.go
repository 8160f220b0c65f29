package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newPortForwardCommand is a placeholder until its issue lands; it fails loudly.
func newPortForwardCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "port-forward",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("port-forward: not built yet")
		},
	}
}
