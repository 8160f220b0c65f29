// Command swapper is the hostile container of crisp cp's e2e race: it
// swaps TARGET, as fast as the kernel lets it, between hard links of the
// entries KIND... of directory ALT (a regular file, a FIFO, a symlink, a
// device node), each moved in with rename(2) so that TARGET always exists:
//
//	swapper ALT TARGET KIND...
//
// A shell loop forks for every ln and mv and swaps a few hundred times a
// second; the gap between a walk's look at a name and its open is
// microseconds, so only a loop of bare system calls (the static C
// loop) hits it. A kind that does not exist yet (the device the test plants)
// is passed over. It stops on its own after ten minutes.
package main

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 4 {
		os.Stderr.WriteString("usage: swapper ALT TARGET KIND...\n")
		os.Exit(2)
	}
	alt, target, kinds := os.Args[1], os.Args[2], os.Args[3:]
	spare := filepath.Join(alt, "spare")
	end := time.Now().Add(10 * time.Minute)
	for i := 0; ; i++ {
		if i%4096 == 0 && time.Now().After(end) {
			return
		}
		_ = syscall.Unlink(spare)
		if syscall.Link(filepath.Join(alt, kinds[i%len(kinds)]), spare) == nil {
			_ = syscall.Rename(spare, target)
		}
	}
}
