package toyshell

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

type buf struct{ bytes.Buffer }

func (*buf) Close() error { return nil }

// exec runs cmd with stdin and returns stdout, stderr and the error.
func exec(t *testing.T, stdin string, resize <-chan remotecommandserver.TerminalSize, cmd ...string) (string, string, error) {
	t.Helper()
	var out, errOut buf
	err := (&Shell{}).Exec(context.Background(), "c1", cmd, strings.NewReader(stdin), &out, &errOut, resize != nil, resize)
	return out.String(), errOut.String(), err
}

func code(err error) int {
	var e utilexec.ExitError
	if errors.As(err, &e) {
		return e.ExitStatus()
	}
	return -1
}

// The commands every streaming test relies on, including the `sh -c`
// scripts probe and smoke send to real runtimes.
func TestCommands(t *testing.T) {
	for _, c := range []struct {
		stdin    string
		cmd      []string
		out, err string
		code     int
	}{
		{"", []string{"echo", "a", "b"}, "a b\n", "", 0},
		{"abc", []string{"cat"}, "abc", "", 0},
		{"a\nb\n", []string{"wc", "-l"}, "2\n", "", 0},
		{"a\nb\n", []string{"wc"}, "4\n", "", 0},
		{"hello", []string{"head", "-c", "3"}, "hel", "", 0},
		{"", []string{"exit", "3"}, "", "", 3},
		{"", []string{"stderr", "oops"}, "", "oops\n", 0},
		{"", []string{"sh", "-c", "exit 7"}, "", "", 7},
		{"", []string{"sh", "-c", "echo to-stdout; echo to-stderr >&2"}, "to-stdout\n", "to-stderr\n", 0},
		{"", []string{"sh", "-c", "dd if=/dev/zero bs=2 count=3 2>/dev/null; head -c 1 /dev/zero"}, "\x00\x00\x00\x00\x00\x00\x00", "", 0},
		{"xxxxxx", []string{"sh", "-c", "head -c 4 | wc -c"}, "4\n", "", 0},
		{"xxxxxx", []string{"sh", "-c", "dd bs=2 count=2 iflag=fullblock 2>/dev/null | wc -c"}, "4\n", "", 0},
		{"a\nb", []string{"readline"}, "got a line\n", "", 0},
		{"", []string{"abc", "30"}, "abcdefghijklmnopqrstuvwxyzabcd", "", 0},
		{"", []string{"sh", "-c", "echo begin; sleep 0.05; sleep 10ms; echo end"}, "begin\nend\n", "", 0},
		{"", []string{"sleep", "soon"}, "", "sleep: invalid time interval \"soon\"\n", 1},
		{"", []string{"nosuch"}, "", "nosuch: not found\n", 127},
	} {
		out, errOut, err := exec(t, c.stdin, nil, c.cmd...)
		if out != c.out || errOut != c.err || (c.code == 0) != (err == nil) || c.code != 0 && code(err) != c.code {
			t.Errorf("%q: stdout %q, stderr %q, err %v; want %q, %q, exit %d", c.cmd, out, errOut, err, c.out, c.err, c.code)
		}
	}
}

// The TTY check's script prints the first size, then the next one.
func TestSttySize(t *testing.T) {
	resize := make(chan remotecommandserver.TerminalSize, 2)
	resize <- remotecommandserver.TerminalSize{Width: 101, Height: 37}
	resize <- remotecommandserver.TerminalSize{Width: 120, Height: 40}
	out, _, err := exec(t, "", resize, "sh", "-c", `sleep 0.3; s=$(stty size); echo "$s"; while [ "$s" = "37 101" ]; do s=$(stty size); done; echo "$s"`)
	if err != nil || out != "37 101\r\n40 120\r\n" {
		t.Errorf("stdout %q, err %v", out, err)
	}
}
