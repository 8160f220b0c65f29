// Command crisp is a CRI client and debugger for the streaming calls (Exec,
// Attach, PortForward). main only wires the process to Main and exits.
package main

import (
	"os"

	"github.com/crisp-cri/crisp/internal/base/startup"
)

func main() {
	startup.MarkMain() // -v's timing breakdown: package initialisation ends here
	os.Exit(Main(os.Args[1:], systemStreams()))
}
