package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newProbeCommand is a placeholder until its issue lands; it fails loudly.
func newProbeCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "probe",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("probe: not built yet")
		},
	}
}
