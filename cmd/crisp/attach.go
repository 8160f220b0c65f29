package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newAttachCommand is a placeholder until its issue lands; it fails loudly.
func newAttachCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "attach",
		Short: "(not built yet)",
		Annotations: map[string]string{passThroughAnnotation: "true"},
		RunE: func(*cobra.Command, []string) error {
			return errors.New("attach: not built yet")
		},
	}
}
