package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newInspectPodCommand is a placeholder until its issue lands; it fails loudly.
func newInspectPodCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "inspectp",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("inspectp: not built yet")
		},
	}
}
