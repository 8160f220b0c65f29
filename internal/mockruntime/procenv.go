package mockruntime

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// containerMarker is the environment variable that marks the processes of
// a container (its value is the container ID): without a pid namespace,
// that is how the container's pgrep tells its processes from the host's.
const containerMarker = "CRISP_MOCK_CONTAINER"

// pgrepScript is the pgrep of busybox images: busybox's, keeping only the
// processes of the container it runs in (those whose environment carries
// its marker), as a pid namespace would show them. BUSYBOX is the busybox
// binary, PGREP the real pgrep (busybox's or the host's).
const pgrepScript = `#!BUSYBOX sh
# crisp mock runtime: pgrep sees only this container's processes.
id="$` + containerMarker + `"
[ -n "$id" ] || exec PGREP "$@"
out=$(PGREP "$@" | while read -r pid rest; do
	case "$pid" in ''|*[!0-9]*) echo "$pid${rest:+ $rest}"; continue;; esac
	if BUSYBOX tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | BUSYBOX grep -qx "` + containerMarker + `=$id"; then
		echo "$pid${rest:+ $rest}"
	fi
done)
[ -n "$out" ] || exit 1
echo "$out"
`

// hostPath is the PATH of containers whose image has no busybox.
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// processEnv knows how images map to host programs: where the busybox
// applet links are.
type processEnv struct {
	// busyboxDir holds one link to busybox per applet; "" when busybox is
	// missing and busybox images fall back to the host's sh.
	busyboxDir string
	applets    map[string]bool
}

func newProcessEnv(logf func(string, ...any)) processEnv {
	// Where Debian's busybox-static (and others) put busybox.
	busyboxCandidates := []string{"/bin/busybox", "/usr/bin/busybox", "/usr/local/bin/busybox"}
	var bin string
	for _, c := range busyboxCandidates {
		if isExecutable(c) == nil {
			bin = c
			break
		}
	}
	if bin == "" {
		logf("warning: no busybox binary (%s); busybox images run the host's /bin/sh and tools; install busybox-static (apt-get install -y busybox-static)", strings.Join(busyboxCandidates, ", "))
		return processEnv{}
	}
	out, err := exec.Command(bin, "--list").Output()
	if err != nil {
		logf("warning: %s --list failed (%v); busybox images run the host's /bin/sh and tools", bin, err)
		return processEnv{}
	}
	var applets []string
	for _, applet := range strings.Fields(string(out)) {
		if !strings.Contains(applet, "/") {
			applets = append(applets, applet)
		}
	}
	dir, err := appletDir(bin, applets)
	if err != nil {
		logf("warning: %v; busybox images run the host's /bin/sh and tools", err)
		return processEnv{}
	}
	env := processEnv{busyboxDir: dir, applets: map[string]bool{}}
	for _, a := range applets {
		env.applets[a] = true
	}
	return env
}

// appletDir returns a folder of links to bin, one per applet. Making ~300
// links costs 50-200 ms on these machines, on every start, so the folder
// is a cache shared by every mock of this user: named after the busybox
// binary (path, size, time), built aside and renamed into place, and only
// trusted when this user owns it and no one else can write to it.
func appletDir(bin string, applets []string) (string, error) {
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d\x00%s", bin, fi.Size(), fi.ModTime().UnixNano(), len(applets), pgrepScript))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("crisp-busybox-%d-%x", os.Geteuid(), sum[:6]))
	if trustedAppletDir(dir) {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "crisp-busybox-build-")
	if err != nil {
		return "", fmt.Errorf("create a folder for busybox applet links: %w", err)
	}
	for _, a := range applets {
		if err := os.Symlink(bin, filepath.Join(tmp, a)); err != nil {
			_ = os.RemoveAll(tmp)
			return "", fmt.Errorf("link busybox applet %s: %w", a, err)
		}
	}
	// pgrep sees the container's processes only, as in a pid namespace.
	// The real pgrep is busybox's when it has one, else the host's.
	pgrep := filepath.Join(tmp, "pgrep")
	realPgrep := bin + " pgrep"
	if _, err := os.Lstat(pgrep); err != nil {
		realPgrep, err = lookPath("pgrep", hostPath)
		if err != nil {
			realPgrep = ""
		}
	}
	if realPgrep != "" {
		script := strings.ReplaceAll(strings.ReplaceAll(pgrepScript, "PGREP", realPgrep), "BUSYBOX", bin)
		_ = os.Remove(pgrep) // the applet link, if any: the script replaces it
		if err := os.WriteFile(pgrep, []byte(script), 0o755); err != nil {
			_ = os.RemoveAll(tmp)
			return "", fmt.Errorf("write the pgrep applet in %s: %w", tmp, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another mock got there first: use its folder if it is sound.
		_ = os.RemoveAll(tmp)
		if trustedAppletDir(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("put busybox applet links in %s: %w", dir, err)
	}
	return dir, nil
}

// trustedAppletDir reports whether dir is a complete applet folder that
// only this user can have written.
func trustedAppletDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, "sh"))
	return err == nil
}

// pathFor is the default PATH of a container of the given kind.
func (e processEnv) pathFor(kind imageKind) string {
	if kind == imageBusybox && e.busyboxDir != "" {
		return e.busyboxDir + ":" + hostPath
	}
	return hostPath
}

// resolve finds the program for argv[0] in a container of the given kind:
// in a busybox image, /bin/sh and the like are busybox applets, as they are
// in a real busybox container.
func (e processEnv) resolve(kind imageKind, name, pathEnv string) (string, error) {
	if kind == imageBusybox && e.busyboxDir != "" && filepath.IsAbs(name) {
		switch filepath.Dir(name) {
		case "/bin", "/sbin", "/usr/bin", "/usr/sbin":
			if base := filepath.Base(name); e.applets[base] {
				return filepath.Join(e.busyboxDir, base), nil
			}
		}
	}
	return lookPath(name, pathEnv)
}
