// Command crisp is a CRI client and debugger for the streaming calls (Exec,
// Attach, PortForward). main only wires the process to Main and exits.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], systemStreams()))
}
