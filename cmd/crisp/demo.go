package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newDemoCommand is a placeholder until its issue lands; it fails loudly.
func newDemoCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("demo: not built yet")
		},
	}
}
