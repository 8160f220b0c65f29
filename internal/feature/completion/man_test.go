package completion

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// manTree is a small command tree with what the pages must handle: a
// persistent flag, a local one, an example, a Long line starting with '.',
// a backslash, and a hidden command.
func manTree() *cobra.Command {
	run := func(*cobra.Command, []string) {}
	root := &cobra.Command{Use: "crisp", Short: "CRI streaming client", Run: run}
	root.PersistentFlags().StringP("runtime-endpoint", "r", "", "CRI runtime `ENDPOINT`")
	exec := &cobra.Command{
		Use:   "exec CONTAINER -- CMD",
		Short: "Run a command in a container",
		Long: "Runs CMD.\n" +
			".PP would be a roff request here\n" +
			"'br too; and C:\\temp keeps its backslash.\n\nEXIT STATUS\n  0  success\n  125  crisp failed",
		Example: "  crisp exec web -- ls /\n\n  printf 'a\\n' | crisp exec -i web -- cat",
		Run:     run,
	}
	exec.Flags().BoolP("tty", "t", false, "allocate a pseudo-terminal")
	exec.Flags().Int("parallel", 8, "sessions at once")
	portForward := &cobra.Command{Use: "port-forward POD PORT", Short: "Forward a port", Run: run}
	hidden := &cobra.Command{Use: "gen-docs", Short: "Generate docs", Hidden: true, Run: run}
	root.AddCommand(exec, portForward, hidden)
	return root
}

func readPages(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		pages[e.Name()] = string(b)
	}
	return pages
}

func TestWriteDocsManPages(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDocs(manTree(), "1.2.3", dir, ""); err != nil {
		t.Fatal(err)
	}
	pages := readPages(t, dir)
	var names []string
	for n := range pages {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"crisp-exec.1", "crisp-port-forward.1", "crisp.1"}; !slices.Equal(names, want) {
		t.Fatalf("pages %q, want %q (no page for the hidden command)", names, want)
	}

	page := pages["crisp-exec.1"]
	lines := strings.Split(page, "\n")
	if lines[0] != `.TH "CRISP" 1 "" "crisp 1.2.3"` {
		t.Errorf("first line %q, want the .TH header", lines[0])
	}
	for _, want := range []string{
		".SH NAME\ncrisp\\-exec \\- Run a command in a container\n",
		".SH SYNOPSIS\n\\fBcrisp exec CONTAINER \\-\\- CMD [flags]\\fR\n",
		"\\fB\\-t\\fR, \\fB\\-\\-tty\\fR\nallocate a pseudo\\-terminal\n",
		"\\fB\\-\\-parallel\\fR \\fIint\\fR\nsessions at once (default 8)\n",
		// Not roff requests: the '.' gets \& in front, the ' is \(aq.
		"\n\\&.PP would be a roff request here\n\\(aqbr too; and C:\\etemp keeps",
		// The EXIT STATUS table keeps its lines.
		".nf\nEXIT STATUS\n  0  success\n  125  crisp failed\n.fi\n",
		".SH EXAMPLE\n.nf\n  crisp exec web \\-\\- ls /\n\n  printf \\(aqa\\en\\(aq | crisp exec \\-i web \\-\\- cat\n.fi\n",
		".SH SEE ALSO\n\\fBcrisp\\fR(1)\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("crisp-exec.1 lacks %q:\n%s", want, page)
		}
	}
	options, inherited, ok := strings.Cut(page, ".SH OPTIONS INHERITED FROM PARENT COMMANDS\n")
	if !ok {
		t.Fatalf("crisp-exec.1 has no inherited options:\n%s", page)
	}
	if !strings.Contains(options, "\\-\\-tty") || strings.Contains(options, "runtime\\-endpoint") {
		t.Errorf("OPTIONS should list --tty and not --runtime-endpoint:\n%s", options)
	}
	if want := "\\fB\\-r\\fR, \\fB\\-\\-runtime\\-endpoint\\fR \\fIENDPOINT\\fR\nCRI runtime ENDPOINT\n"; !strings.Contains(inherited, want) {
		t.Errorf("inherited options lack %q:\n%s", want, inherited)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, ".") && !slices.Contains([]string{".TH", ".nh", ".ad", ".SH", ".PP", ".TP", ".nf", ".fi"}, l[:3]) {
			t.Errorf("crisp-exec.1 line %q reads as an unexpected roff request", l)
		}
	}

	root := pages["crisp.1"]
	for _, want := range []string{"\\fB\\-\\-runtime\\-endpoint\\fR", ".SH SEE ALSO\n\\fBcrisp\\-exec\\fR(1),\n\\fBcrisp\\-port\\-forward\\fR(1)\n"} {
		if !strings.Contains(root, want) {
			t.Errorf("crisp.1 lacks %q:\n%s", want, root)
		}
	}
	if strings.Contains(root, "gen\\-docs") || strings.Contains(root, "INHERITED") {
		t.Errorf("crisp.1 names the hidden command or has inherited options:\n%s", root)
	}

	again := t.TempDir()
	if err := WriteDocs(manTree(), "1.2.3", again, ""); err != nil {
		t.Fatal(err)
	}
	for n, b := range readPages(t, again) {
		if b != pages[n] {
			t.Errorf("%s differs between two runs", n)
		}
	}

	if _, err := exec.LookPath("groff"); err != nil {
		t.Log("no groff: pages not rendered")
		return
	}
	for _, n := range names {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", filepath.Join(dir, n))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("groff %s: %v\n%s", n, err, stderr.String())
		}
		if n == "crisp-exec.1" && !bytes.Contains(out, []byte(".PP would be a roff request here")) {
			t.Errorf("rendered crisp-exec.1 lost the line starting with '.':\n%s", out)
		}
	}
}
