package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newPodsCommand is a placeholder until its issue lands; it fails loudly.
func newPodsCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "pods",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("pods: not built yet")
		},
	}
}
