//go:build !unix

package portforward

// pfOpenFilesLimit is unknown outside Unix.
func pfOpenFilesLimit() uint64 { return 0 }
