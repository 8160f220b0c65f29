package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newExecCommand is a placeholder until its issue lands; it fails loudly.
func newExecCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "exec",
		Short: "(not built yet)",
		Annotations: map[string]string{passThroughAnnotation: "true"},
		RunE: func(*cobra.Command, []string) error {
			return errors.New("exec: not built yet")
		},
	}
}
