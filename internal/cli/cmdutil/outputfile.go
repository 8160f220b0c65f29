package cmdutil

import (
	"fmt"

	"github.com/crisp-cri/crisp/internal/base/outfile"
)

// CheckOutputFile refuses in Validate a file flag's path that crisp would
// only write at the end of its run (--junit): a FIFO, a link or a directory
// there is a usage error before any check runs, not after all of them.
func CheckOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := outfile.Check(path); err != nil {
		return fmt.Errorf("%s %w", flag, err)
	}
	return nil
}
