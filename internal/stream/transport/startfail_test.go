package transport

import "testing"

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
