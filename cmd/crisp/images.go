package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newImagesCommand is a placeholder until its issue lands; it fails loudly.
func newImagesCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "images",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("images: not built yet")
		},
	}
}
