package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newInspectCommand is a placeholder until its issue lands; it fails loudly.
func newInspectCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("inspect: not built yet")
		},
	}
}
