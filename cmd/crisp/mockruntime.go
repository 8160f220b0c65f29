package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newMockRuntimeCommand is a placeholder until its issue lands; it fails loudly.
func newMockRuntimeCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "mock-runtime",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("mock-runtime: not built yet")
		},
	}
}
