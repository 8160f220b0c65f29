package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newSmokeCommand is a placeholder until its issue lands; it fails loudly.
func newSmokeCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "smoke",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("smoke: not built yet")
		},
	}
}
