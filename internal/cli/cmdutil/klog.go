package cmdutil

import (
	"flag"
	"io"

	"k8s.io/klog/v2"
)

// QuietKlog stops client-go and the streaming libraries from printing their
// own log lines; crisp reports errors itself.
func QuietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
