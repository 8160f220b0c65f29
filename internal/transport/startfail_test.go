package transport

import (
	"strings"
	"testing"
)

func TestStartFailure(t *testing.T) {
	tests := []struct {
		text string
		code int // 0: not a start failure
	}{
		// containerd 1.6/2.x through runc
		{`Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "3f": OCI runtime exec failed: exec failed: unable to start container process: exec: "nosuchcmd": executable file not found in $PATH: unknown`, 127},
		{`OCI runtime exec failed: exec failed: unable to start container process: exec: "/nope": stat /nope: no such file or directory: unknown`, 127},
		{`OCI runtime exec failed: exec failed: unable to start container process: exec: "/etc/passwd": permission denied: unknown`, 126},
		// crisp's mock
		{`Internal error occurred: error executing command in container: exec in container 5a4f: "nosuchcmd": executable file not found in $PATH (/bin)`, 127},
		{`Internal error occurred: error executing command in container: exec in container 5a4f: /etc/passwd: not an executable file`, 126},
		// not about starting the command
		{`dial unix /run/containerd/containerd.sock: connect: permission denied`, 0},
		{`command terminated with non-zero exit code: exit status 3`, 0},
	}
	for _, tt := range tests {
		e, ok := StartFailure(tt.text)
		switch {
		case tt.code == 0 && ok:
			t.Errorf("%q read as a start failure %d", tt.text, e.Code)
		case tt.code != 0 && (!ok || e.Code != tt.code):
			t.Errorf("%q: got %v, want exit %d", tt.text, e, tt.code)
		case ok && (e.Message == "" || e.ExitStatus() != tt.code):
			t.Errorf("%q: message %q, status %d", tt.text, e.Message, e.ExitStatus())
		}
	}
}

// CRI-O passes runc exec's 255 and its reason on stderr through: with
// runc's line as the last one written, that is 127 or 126 as on
// containerd; any other 255 or status is the command's own.
func TestExecFailure(t *testing.T) {
	tests := []struct {
		code int
		tail string
		want int // 0: the command's own status
	}{
		{255, "time=\"2026-12-01T22:00:00Z\" level=error msg=\"exec failed: unable to start container process: exec: \\\"nosuchcmd\\\": executable file not found in $PATH\"\n", 127},
		{255, "exec failed: unable to start container process: exec: \"/nope\": stat /nope: no such file or directory\n", 127},
		{255, "some output\r\ntime=\"x\" level=error msg=\"exec failed: unable to start container process: exec: \\\"/etc/passwd\\\": permission denied\"\r\n", 126},
		// with a TTY: logrus's terminal form, coloured, on stdout (CRI-O 1.34)
		{255, "\x1b[31mERRO\x1b[0m[0000] exec failed: unable to start container process: exec: \"nosuchcmd\": executable file not found in $PATH \r\n", 127},
		{255, `exec failed: container_linux.go:345: starting container process caused "exec: \"sh\": executable file not found in $PATH"`, 127},
		// runc's line, then the command wrote on: not runc's answer
		{255, "exec failed: unable to start container process: exec: \"x\": executable file not found in $PATH\nmore\n", 0},
		// the command's own 255 and its own words
		{255, "ssh: connect to host x: exec: no such file or directory\n", 0},
		{255, "", 0},
		// not 255: the status stands whatever was written
		{1, "exec failed: unable to start container process: exec: \"x\": executable file not found in $PATH\n", 0},
		{127, "sh: nosuchcmd: not found\n", 0},
	}
	for _, tt := range tests {
		e, ok := ExecFailure(tt.code, []byte(tt.tail))
		switch {
		case tt.want == 0 && ok:
			t.Errorf("%d %q read as a start failure %d", tt.code, tt.tail, e.Code)
		case tt.want != 0 && (!ok || e.Code != tt.want):
			t.Errorf("%d %q: got %v, want exit %d", tt.code, tt.tail, e, tt.want)
		case ok && (!strings.Contains(e.Message, "exec failed") || strings.Contains(e.Message, `msg="`)):
			t.Errorf("%q: message %q", tt.tail, e.Message)
		}
	}
}
