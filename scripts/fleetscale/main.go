// Command fleetscale makes what `make fleet-scale` (scripts/k8s/fleet-scale.sh)
// runs crisp fleet on, and checks what fleet made of it: kwok nodes whose
// crisp pods complete, and whose crisp logs (kwok's Logs resources) are
// reports recorded from the real nodes: most passing, some failing, some cut
// short, some unreadable, some with no report at all.
//
// Usage:
//
//	fleetscale nodes N                      N kwok Node objects (YAML) on stdout
//	fleetscale config [flags] N             kwok's configuration (stages and one
//	                                        Logs object per pod) on stdout, the
//	                                        logs in -logs DIR
//	fleetscale check [flags] N < fleet.json compare fleet's -o json with what
//	                                        each node was given; exit 1 if they differ
//
// Node i is kwok-node-NNNN; fleet names its pod crisp-MODE-RUNID-i, the nodes
// being listed by name. What node i is given depends on i mod 20 (kinds).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// The kinds of node, by i mod 20.
const (
	kindCut    = "cut"    // a passing report cut in the middle (a pod killed while printing)
	kindSchema = "schema" // a report of an unknown schemaVersion
	kindNone   = "none"   // crisp's stderr, no report
	kindFail   = "fail"   // a failing report, recorded
	kindPass   = "pass"   // a passing report, recorded
)

func kindOf(i int) string {
	switch i % 20 {
	case 0:
		return kindCut
	case 1:
		return kindSchema
	case 2:
		return kindNone
	case 3, 4:
		return kindFail
	}
	return kindPass
}

func nodeName(i int) string { return fmt.Sprintf("kwok-node-%04d", i) }

func main() {
	// The script reads the exit status: 2 for a usage error, 1 otherwise.
	if code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); code != 0 {
		os.Exit(code) //nolint:forbidigo // a harness tool's own main, its one exit
	}
}

// run is the program but for its exit: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		_, _ = fmt.Fprintln(stderr, "usage: fleetscale nodes|config|check [flags] N")
		return 2
	}
	var err error
	switch args[0] {
	case "nodes":
		err = nodes(args[1:], stdout)
	case "config":
		err = config(args[1:], stdout, stderr)
	case "check":
		err = check(args[1:], stdin, stdout)
	default:
		_, _ = fmt.Fprintf(stderr, "fleetscale: unknown command %q; want nodes, config or check\n", args[0])
		return 2
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "fleetscale:", err)
		return 1
	}
	return 0
}

func count(fs *flag.FlagSet, args []string) (int, error) {
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	var n int
	if fs.NArg() != 1 {
		return 0, fmt.Errorf("want N, the number of nodes")
	}
	if _, err := fmt.Sscan(fs.Arg(0), &n); err != nil || n < 1 || n > 10000 {
		return 0, fmt.Errorf("the number of nodes must be 1-10000, not %q", fs.Arg(0))
	}
	return n, nil
}

// nodes writes N fake nodes for kwok: its annotation, a label to select
// them by, and kwok's taint (crisp fleet tolerates NoSchedule).
func nodes(args []string, w io.Writer) error {
	n, err := count(flag.NewFlagSet("nodes", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	for i := range n {
		_, err := fmt.Fprintf(w, `---
apiVersion: v1
kind: Node
metadata:
  name: %s
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: %s, kubernetes.io/os: linux}
spec:
  taints: [{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]
`, nodeName(i), nodeName(i))
		if err != nil {
			return err
		}
	}
	return nil
}

// config writes kwok's stages and a Logs object per pod, and each pod's
// crisp log in CRI's log format, from the recorded reports. A recorded log
// that does not read as one report of its kind is left out and named on
// notes: the nodes are given only what check can expect fleet to read.
func config(args []string, w, notes io.Writer) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	mode := fs.String("mode", "smoke", "smoke or probe")
	pass := fs.String("pass", "", "folder of recorded logs (NODE.MODE.log), meant to pass")
	fail := fs.String("fail", "", "folder of recorded logs (NODE.MODE.log), meant to fail")
	logs := fs.String("logs", "", "folder to write the pods' logs to")
	runID := fs.String("run-id", "", "fleet's --run-id")
	ns := fs.String("namespace", "", "fleet's namespace")
	withStages := fs.Bool("stages", true, "write crisp's node and pod-complete stages too")
	delay := fs.Duration("delay", 20*time.Second, "how long a node's crisp runs, at least")
	jitter := fs.Duration("jitter", 40*time.Second, "how long a node's crisp runs, at most")
	n, err := count(fs, args)
	if err != nil {
		return err
	}
	passing, failing, err := recorded([]string{*pass, *fail}, *mode, notes)
	if err != nil {
		return err
	}
	if *withStages {
		r := strings.NewReplacer("DELAY_MS", strconv.FormatInt(delay.Milliseconds(), 10), "JITTER_MS", strconv.FormatInt(jitter.Milliseconds(), 10))
		if _, err := io.WriteString(w, r.Replace(stages)); err != nil {
			return err
		}
	}
	stamp := time.Now().UTC()
	for i := range n {
		var body string
		switch kindOf(i) {
		case kindPass:
			body = rename(passing[i%len(passing)], nodeName(i))
		case kindFail:
			body = rename(failing[i%len(failing)], nodeName(i))
		case kindCut:
			full := rename(passing[i%len(passing)], nodeName(i))
			body = full[:len(full)/2]
		case kindSchema:
			body = strings.Replace(rename(passing[i%len(passing)], nodeName(i)), `"schemaVersion": 1`, `"schemaVersion": 99`, 1)
		case kindNone:
			body = "crisp: " + *mode + ": the runtime at unix:///run/crisp-fleet/runtime.sock did not answer\n"
		}
		file := filepath.Join(*logs, fmt.Sprintf("%s-%04d.log", *mode, i))
		if err := os.WriteFile(file, criLog(body, stamp), 0o644); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "---\napiVersion: kwok.x-k8s.io/v1alpha1\nkind: Logs\nmetadata: {name: crisp-%s-%s-%d, namespace: %s}\nspec:\n  logs:\n  - containers: [crisp]\n    logsFile: %s\n",
			*mode, *runID, i, *ns, file)
		if err != nil {
			return err
		}
	}
	return nil
}

// recorded reads the logs fleet --save-logs wrote for mode in dirs and
// sorts them by what they read as: one passing report or one failing one,
// whichever folder they are in (a real node can fail a run meant to pass:
// CRI-O now and then loses a TTY's last line). A log that reads as neither
// is left out and named on notes with why: a real node's log can garble its
// own report (the runtime interleaves crisp's stdout and stderr in no fixed
// order), and that is worth seeing, but it is no report of either kind.
func recorded(dirs []string, mode string, notes io.Writer) (passing, failing []string, err error) {
	var files []string
	for _, dir := range dirs {
		found, err := filepath.Glob(filepath.Join(dir, "*."+mode+".log"))
		if err != nil {
			return nil, nil, fmt.Errorf("listing the recorded %s logs in %q: %w", mode, dir, err)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		failed, why := readsAs(f, b)
		switch {
		case why != "":
			if _, err := fmt.Fprintf(notes, "fleetscale: left out %s: %s\n", f, why); err != nil {
				return nil, nil, err
			}
		case failed:
			failing = append(failing, string(b))
		default:
			passing = append(passing, string(b))
		}
	}
	if len(passing) == 0 || len(failing) == 0 {
		return nil, nil, fmt.Errorf("%d passing and %d failing recorded %s logs (NODE.%s.log) in %q, want both: record them with crisp fleet %s --save-logs",
			len(passing), len(failing), mode, mode, dirs, mode)
	}
	return passing, failing, nil
}

// readsAs says whether log is one failing report, as crisp report's
// decoder reads it, or why it is not one report at all.
func readsAs(name string, log []byte) (failed bool, why string) {
	docs, probs, err := report.Decode(name, bytes.NewReader(log))
	switch {
	case err != nil:
		return false, err.Error()
	case len(probs) > 0:
		return false, "it holds a report that cannot be read: " + probs[0].Err
	case len(docs) != 1:
		return false, fmt.Sprintf("it holds %d reports, not 1", len(docs))
	}
	return docs[0].Run.Failed(), ""
}

// rename makes a recorded report another node's: its "node" field.
func rename(log, node string) string {
	i := strings.Index(log, `"node": "`)
	if i < 0 {
		return log
	}
	j := strings.Index(log[i+9:], `"`)
	return log[:i+9] + node + log[i+9+j:]
}

// criLog writes log lines as the CRI's log files hold them.
func criLog(body string, t time.Time) []byte {
	var b strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		if line == "" {
			continue
		}
		tag := "F"
		if !strings.HasSuffix(line, "\n") {
			tag, line = "P", line+"\n" // cut mid-line: a partial line
		}
		fmt.Fprintf(&b, "%s stdout %s %s", t.Format(time.RFC3339Nano), tag, line)
	}
	return []byte(b.String())
}

// check compares fleet's JSON with what each node was given.
func check(args []string, r io.Reader, w io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	n, err := count(fs, args)
	if err != nil {
		return err
	}
	var fl struct {
		Runs []struct {
			Node   string `json:"node"`
			Checks []struct {
				Outcome string `json:"outcome"`
				Detail  string `json:"detail"`
			} `json:"checks"`
		} `json:"runs"`
		Problems []struct {
			Source string `json:"source"`
			Err    string `json:"error"`
		} `json:"problems"`
	}
	if err := json.NewDecoder(r).Decode(&fl); err != nil {
		return fmt.Errorf("reading fleet's JSON: %w", err)
	}
	got := map[string]string{}
	for _, run := range fl.Runs {
		failed := ""
		for _, c := range run.Checks {
			if c.Outcome == "fail" && failed == "" {
				failed = c.Detail
			}
		}
		got[run.Node] = failed
	}
	problems := map[string]string{}
	for _, p := range fl.Problems {
		node, _, _ := strings.Cut(p.Source, " ")
		problems[node] = p.Err
	}
	var wrong []string
	counts := map[string]int{}
	for i := range n {
		node, kind := nodeName(i), kindOf(i)
		counts[kind]++
		failed, ran := got[node]
		var ok bool
		switch kind {
		case kindPass:
			ok = ran && failed == "" && problems[node] == ""
		case kindFail:
			ok = ran && failed != "" && problems[node] == ""
		case kindNone:
			ok = ran && strings.Contains(failed, "printed no report")
		case kindCut:
			ok = ran && strings.Contains(failed, "could not be read") && strings.Contains(problems[node], "cut short")
		case kindSchema:
			ok = ran && strings.Contains(failed, "could not be read") && strings.Contains(problems[node], "schemaVersion")
		}
		if !ok {
			wrong = append(wrong, fmt.Sprintf("%s (%s): ran %v, failed %q, problem %q", node, kind, ran, failed, problems[node]))
		}
	}
	if len(fl.Runs) != n {
		wrong = append(wrong, fmt.Sprintf("%d runs for %d nodes", len(fl.Runs), n))
	}
	if _, err := fmt.Fprintf(w, "fleetscale: %d nodes: %d passing, %d failing, %d without a report, %d cut short, %d of an unknown schema; fleet's JSON: %d runs, %d problems, %d wrong\n",
		n, counts[kindPass], counts[kindFail], counts[kindNone], counts[kindCut], counts[kindSchema], len(fl.Runs), len(fl.Problems), len(wrong)); err != nil {
		return err
	}
	if len(wrong) > 0 {
		return fmt.Errorf("fleet merged %d nodes wrongly, e.g.:\n  %s", len(wrong), strings.Join(wrong[:min(len(wrong), 10)], "\n  "))
	}
	return nil
}

// stages are the kwok stages of crisp's own, beside kwok's pod-ready and
// pod-delete (which the script takes from its module):
//   - a node's start and its heartbeat write the node's addresses and
//     kubelet port every time, explicitly: kwok's own node stages render
//     them from the node's status, and at 1000 nodes under load nodes lost
//     them (the API server then answers a log read with "no preferred
//     addresses found; known addresses: []");
//   - the heartbeat comes every 5-6 minutes, as a kubelet with a lease
//     reports its status: kwok renews each node's lease (its default), which
//     keeps the node Ready, and a status patch per node every 20-45 s was a
//     load of its own that made nodes NotReady;
//   - after the delay, crisp's container terminates (exit 0; the reports
//     say how the node fared) and the pod succeeds.
const stages = `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: crisp-node-initialize}
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
` + nodeStatus + `
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: crisp-node-heartbeat}
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: In
      values: [Running]
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: In
      values: ['True']
  delay: {durationMilliseconds: 300000, jitterDurationMilliseconds: 360000}
  next:
    statusTemplate: |
` + nodeStatus + `
  immediateNextStage: true
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: crisp-fleet-pod-complete}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {app.kubernetes.io/managed-by: crisp-fleet}
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: [Running]
  delay: {durationMilliseconds: DELAY_MS, jitterDurationMilliseconds: JITTER_MS}
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
      {{ end }}
      phase: Succeeded
`

// nodeStatus is a kwok node's whole status (indented for a statusTemplate):
// Ready, its addresses, its kubelet port (kwok's server, which serves the
// Logs), room for any pod.
const nodeStatus = `      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      addresses:
      - address: {{ NodeIP | Quote }}
        type: InternalIP
      - address: {{ NodeName | Quote }}
        type: Hostname
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ NodePort }}
      allocatable: {cpu: 1k, memory: 1Ti, pods: 1M}
      capacity: {cpu: 1k, memory: 1Ti, pods: 1M}
      nodeInfo:
        architecture: amd64
        containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
        kernelVersion: {{ printf "kwok-%s" Version | Quote }}
        kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
        kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
        operatingSystem: linux
      phase: Running`
