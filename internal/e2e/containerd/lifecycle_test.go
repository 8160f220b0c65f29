package containerd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// crictl's lifecycle with crisp alone, on each runtime: runp, create,
// start, logs (--tail, -f), stats, stop, rm, run (and a failed run leaving
// nothing behind), stopp, rmp, inspecti, imagefsinfo; events where the runtime serves them (2.4), a clear error
// where it does not (1.6) or ends the stream at once (CRI-O). No crictl: the pods and containers are crisp's.

var idRE = regexp.MustCompile(`^[0-9a-f]{64}\n$`)

// ticker prints a numbered line every 0.2 s to stdout, for logs -f; a line
// tickLead lines after the last one logged comes 10 s later.
const tickLead = 50

// ticker's command.
var tickerCommand = []string{"sh", "-c", `i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.2; done`}

func TestCrispLifecycle(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		dir := t.TempDir()
		name := fmt.Sprintf("lc-%d", time.Now().UnixNano())
		pod := h.lifecyclePod(t, dir, name)
		podID := h.crispID(t, "runp", pod)
		h.cleanupPod(t, podID)

		ctr := writeJSON(t, dir, "ctr.json", h.lifecycleContainer("ticker", tickerCommand))
		ctrID := h.crispID(t, "create", podID, ctr, pod)
		if id := h.crispID(t, "start", "ticker"); id != ctrID {
			t.Fatalf("crisp start ticker printed %s, want the created %s", id, ctrID)
		}

		// logs: the last line only; then -f, which follows what comes after
		// (tickLead lines later than the file held when it started).
		// The log is empty until the shell's first echo, which start does
		// not wait for (containerd 1.6 once answered before it).
		r := h.crisp(t, "logs", "--tail", "1", "ticker")
		for deadline := time.Now().Add(10 * time.Second); r.ExitCode == 0 && r.Stdout == "" && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond) // the first line is 0.2 s away at most, once the shell runs
			r = h.crisp(t, "logs", "--tail", "1", "ticker")
		}
		if r.ExitCode != 0 || !regexp.MustCompile(`^tick \d+\n$`).MatchString(r.Stdout) {
			t.Fatalf("crisp logs --tail 1: want one line; got %v", r)
		}
		follow := h.follow(t, "logs", "-f", ctrID)
		want := fmt.Sprintf("tick %d", atoi(t, strings.Fields(r.Stdout)[1])+tickLead)
		follow.waitLine(t, want, 60*time.Second)

		// stats of the running container.
		r = h.crisp(t, "stats", "-o", "json", ctrID)
		var stats struct {
			Stats []struct {
				Attributes struct{ ID string }
				CPU        map[string]any
			}
		}
		if r.ExitCode != 0 || json.Unmarshal([]byte(r.Stdout), &stats) != nil || len(stats.Stats) != 1 ||
			stats.Stats[0].Attributes.ID != ctrID || stats.Stats[0].CPU == nil {
			t.Errorf("crisp stats %s: want its CPU figures; got %v", ctrID, r)
		}

		// stop ends logs -f; rm removes a stopped container.
		if id := h.crispID(t, "stop", "-t", "1", ctrID); id != ctrID {
			t.Errorf("crisp stop printed %s, want %s", id, ctrID)
		}
		follow.waitExit(t, 30*time.Second)
		h.crispID(t, "rm", ctrID)
		if r := h.crisp(t, "ps", "-a", "-q", "-p", podID); r.ExitCode != 0 || strings.Contains(r.Stdout, ctrID) {
			t.Errorf("crisp ps -a after rm: want %s gone; got %v", ctrID, r)
		}

		// run: a pod and its container in one, removed with rm -f, stopp, rmp.
		runPod := h.lifecyclePod(t, dir, name+"-run")
		runCtr := writeJSON(t, dir, "run.json", h.lifecycleContainer("runner", []string{"sleep", "600"}))
		runID := h.crispID(t, "run", runCtr, runPod)
		r = h.crisp(t, "inspect", "-o", "go-template", "--template", "{{.status.state}} {{.info.sandboxID}}", runID)
		if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "CONTAINER_RUNNING") {
			t.Fatalf("crisp inspect of run's container: want it running; got %v", r)
		}
		runPodID := strings.TrimSpace(r.Stdout[strings.LastIndexByte(r.Stdout, ' ')+1:])
		h.cleanupPod(t, runPodID)
		if r := h.crisp(t, "rm", runID); r.ExitCode != 1 || !strings.Contains(r.Stderr, "stop it first") {
			t.Errorf("crisp rm of a running container: want exit 1 saying to stop it first; got %v", r)
		}
		h.crispID(t, "rm", "-f", runID)
		for _, id := range []string{runPodID, podID} {
			if r := h.crisp(t, "stopp", id); r.ExitCode != 0 || r.Stdout != "Stopped sandbox "+id+"\n" {
				t.Errorf("crisp stopp %s: %v", id, r)
			}
			if r := h.crisp(t, "rmp", id); r.ExitCode != 0 || r.Stdout != "Removed sandbox "+id+"\n" {
				t.Errorf("crisp rmp %s: %v", id, r)
			}
		}
		if r := h.crisp(t, "pods", "-q", "--name", name); r.ExitCode != 0 || r.Stdout != "" {
			t.Errorf("crisp pods after rmp: want none named %s*; got %v", name, r)
		}

		// A run that fails midway (the image is missing and may not be
		// pulled) removes the pod it made.
		ghostPod := h.lifecyclePod(t, dir, name+"-ghost")
		ghost := h.lifecycleContainer("ghost", []string{"true"})
		ghost["image"] = map[string]any{"image": "docker.io/library/crisp-ghost:1"}
		r = h.crisp(t, "run", "--no-pull", writeJSON(t, dir, "ghost.json", ghost), ghostPod)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "which the failed run had created") {
			t.Errorf("crisp run of a missing image with --no-pull: want exit 1 and the pod removed; got %v", r)
		}
		if r := h.crisp(t, "pods", "-q", "--name", name+"-ghost"); r.ExitCode != 0 || r.Stdout != "" {
			t.Errorf("crisp pods after the failed run: want no pod %s-ghost; got %v", name, r)
		}

		// Images: containerd's IDs are sha256:HEX, CRI-O's the bare HEX.
		r = h.crisp(t, "inspecti", "-o", "go-template", "--template", "{{.status.id}} {{index .status.repoTags 0}}", h.BusyboxImage)
		if r.ExitCode != 0 || !imageIDRE.MatchString(r.Stdout) || !strings.Contains(r.Stdout, h.BusyboxImage) {
			t.Errorf("crisp inspecti %s: want its ID and tag; got %v", h.BusyboxImage, r)
		}
		r = h.crisp(t, "imagefsinfo", "-o", "json")
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, `"imageFilesystems"`) || !strings.Contains(r.Stdout, `"mountpoint"`) {
			t.Errorf("crisp imagefsinfo: want the image filesystems with their mount points; got %v", r)
		}
	})
}

// imageIDRE matches an image ID at the start of a line, as containerd
// (sha256:HEX) and CRI-O (HEX) give it.
var imageIDRE = regexp.MustCompile(`^(sha256:)?[0-9a-f]{64} `)

// crisp events: 2.4 streams a container's events; 1.6 does not serve them,
// and crisp says so and exits 1; CRI-O ends the stream at once, and crisp
// says so and exits 0, as crictl does.
func TestCrispEvents(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		switch h.spec.serves.events {
		case eventsUnimplemented:
			r := h.crisp(t, "events")
			if r.ExitCode != 1 || !strings.Contains(r.Stderr, "does not serve container events") {
				t.Fatalf("crisp events on %s: want exit 1 saying the runtime does not serve events; got %v", h.Name, r)
			}
			t.Logf("crisp events on %s: %s", h.Name, strings.TrimSpace(r.Stderr))
			return
		case eventsClosed:
			r := h.crisp(t, "events")
			if r.ExitCode != 0 || !strings.Contains(r.Stderr, "closed the container event stream") {
				t.Fatalf("crisp events on %s: want exit 0 saying the runtime closed the stream; got %v", h.Name, r)
			}
			t.Logf("crisp events on %s: %s", h.Name, strings.TrimSpace(r.Stderr))
			return
		}
		ev := startBackground(t, h.crispCmd(t, t.Context(), "events", "-o", "json"))
		// The stream is open once crisp has sent its request; a container
		// created before then is not reported: create until one is.
		deadline := time.Now().Add(30 * time.Second)
		for {
			id := h.newContainer(t, ContainerSpec{Name: "crisp-events"})
			if strings.Contains(ev.Output(), id) {
				ev.WaitFor(t, regexp.MustCompile(`CONTAINER_(CREATED|STARTED)_EVENT`), 10*time.Second)
				return
			}
			if exited, err := ev.Exited(); exited {
				t.Fatalf("crisp events on %s exited: %v\n%s", h.Name, err, ev.Output())
			}
			if time.Now().After(deadline) {
				t.Fatalf("crisp events on %s: no event for the containers created; output:\n%s", h.Name, ev.Output())
			}
			time.Sleep(500 * time.Millisecond)
		}
	})
}

// lifecyclePod writes a host-network pod config named name (the harness's
// host-network pod's, renamed, its logs under dir) and returns its path.
func (h *Harness) lifecyclePod(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(h.HostnetPodConfig)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", h.HostnetPodConfig, err)
	}
	cfg["metadata"] = map[string]any{"name": name, "namespace": "crisp", "uid": name + "-uid"}
	cfg["log_directory"] = filepath.Join(dir, "logs", name)
	return writeJSON(t, dir, name+".json", cfg)
}

// lifecycleContainer is a busybox container config running command.
func (h *Harness) lifecycleContainer(name string, command []string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": name}, "image": map[string]any{"image": h.BusyboxImage},
		"command": command, "log_path": name + ".log", "linux": map[string]any{},
	}
}

// crispID runs crisp with args, requires it to print one ID and returns it.
func (h *Harness) crispID(t *testing.T, args ...string) string {
	t.Helper()
	r := h.crisp(t, args...)
	if r.ExitCode != 0 || !idRE.MatchString(r.Stdout) {
		t.Fatalf("crisp %s: want an ID; got %v", strings.Join(args, " "), r)
	}
	return strings.TrimSpace(r.Stdout)
}

// cleanupPod removes the pod (and its containers) at the end of the test,
// should the test not get to it.
func (h *Harness) cleanupPod(t *testing.T, id string) {
	t.Cleanup(func() {
		if r := h.crisp(t, "rmp", "-f", id); r.ExitCode != 0 && !strings.Contains(r.Stderr, "no pod matches") {
			t.Logf("crisp rmp -f %s: %v", id, r)
		}
	})
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	i, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// A failed `crisp run` whose pod config matches an existing pod's metadata
// leaves that pod alone, on every runtime: containerd refuses the second
// RunPodSandbox (the run fails before it made anything); CRI-O answers with
// the existing pod's ID, and the run, which made only its container, says
// it left the pod in place.
func TestCrispRunLeavesAnExistingPod(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		dir := t.TempDir()
		name := fmt.Sprintf("keep-%d", time.Now().UnixNano())
		pod := h.lifecyclePod(t, dir, name)
		podID := h.crispID(t, "runp", pod)
		h.cleanupPod(t, podID)

		ghost := h.lifecycleContainer("ghost", []string{"true"})
		ghost["image"] = map[string]any{"image": "docker.io/library/crisp-ghost:1"}
		r := h.crisp(t, "run", "--no-pull", writeJSON(t, dir, "ghost.json", ghost), pod)
		if r.ExitCode == 0 || strings.Contains(r.Stderr, "removed pod") {
			t.Errorf("crisp run into an existing pod's metadata, image missing: want a failure that removes no pod; got %v", r)
		}
		if h.spec.kind == crioKind && !strings.Contains(r.Stderr, "left pod "+podID) {
			t.Errorf("crisp run on %s: want it to say it left pod %s in place; got %v", h.Name, podID, r)
		}
		if r := h.crisp(t, "pods", "-q", "--id", podID); r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != podID {
			t.Errorf("the earlier pod %s after the failed run: %v", podID, r)
		}
	})
}
