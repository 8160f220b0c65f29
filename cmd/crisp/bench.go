package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newBenchCommand is a placeholder until its issue lands; it fails loudly.
func newBenchCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "bench",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("bench: not built yet")
		},
	}
}
