package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newPsCommand is a placeholder until its issue lands; it fails loudly.
func newPsCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "ps",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("ps: not built yet")
		},
	}
}
