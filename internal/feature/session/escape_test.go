package session

import (
	"bytes"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// TestDiagnosticsEscape: crisp's own lines on the error stream quote the
// streaming server (v1-v3's failure text, -v's reasons) and the runtime;
// none of it drives the terminal. The old lines wrote it raw.
func TestDiagnosticsEscape(t *testing.T) {
	var errOut bytes.Buffer
	d := Deps{Streams: cmdutil.IOStreams{ErrOut: &errOut}, Verbose: 1}
	_ = d.Outcome(t.Context(), &transport.ExitError{Code: 1, Message: "failed \x1b]52;c;cm0K\a\x1b[2J"})
	d.Logf("server said %s", "\x1b]0;PWNED\a")
	cfg, err := d.TransportConfig(cmdutil.TLSFlags{}, client.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logf("upgrade refused: %s", "reason\x1b]0;R\a")
	got := errOut.String()
	if strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("the error stream got control bytes: %q", got)
	}
	for _, want := range []string{
		"crisp: remote command failed: failed \\x1b]52;c;cm0K\\x07\\x1b[2J\n",
		"crisp: server said \\x1b]0;PWNED\\x07\n",
		"upgrade refused: reason\\x1b]0;R\\x07\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the error stream lacks %q:\n%s", want, got)
		}
	}
}
