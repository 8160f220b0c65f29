// Package doctor walks the streaming path of exec, attach and port-forward
// hop by hop (crisp doctor): on a node, the CRI socket, the runtime's
// readiness, the target, the Exec RPC and the URL it returns, TCP and TLS
// to the streaming server, the upgrade per transport, a one-command round
// trip, attach and port-forward; from a workstation (kubeconfig.go), the
// API server, the user, RBAC, the pod, its node's kubelet, and exec, attach
// and port-forward through the API server. It stops at the first hop that
// fails and says what was tried, the error, what that error means on this
// runtime and the fix (explain.go). --repeat runs the path many times and
// groups the failures (repeat.go).
//
// Reports are data (report.go, versioned JSON documented in
// docs/doctor.md); the text and JUnit renderings live beside them. It
// streams through internal/transport alone, reaches the runtime through
// internal/client, and knows no command line: cmd/crisp/doctor.go binds the
// flags to Node's and Kube's fields.
package doctor

import (
	"time"

	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// SchemaVersion is the version of the doctor report's JSON shape
// (docs/doctor.md). It goes up when a field changes meaning or goes away;
// new fields do not bump it.
const SchemaVersion = 1

// Kind is the report kind doctor reports carry ("kind": "doctor"), beside
// probe's smoke and probe.
const Kind = "doctor"

// Modes: where the path was walked from.
const (
	ModeNode       = "node"
	ModeKubeconfig = "kubeconfig"
)

// Millis is a duration that reads as milliseconds in JSON (probe's).
type Millis = probe.Millis

// Outcome is one hop's verdict.
type Outcome string

// Hop outcomes. Note is something worth knowing that works (WebSocket v5
// refused but v4 accepted: a fallback); Warn works here but breaks a path
// others take (SPDY refused while WebSocket works: the kubelet's proxy
// speaks SPDY); Skip did not apply (no TLS on an http URL, no --port).
const (
	Pass Outcome = "pass"
	Note Outcome = "note"
	Warn Outcome = "warn"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
)

// Hop is one step of the path and what was seen there.
type Hop struct {
	// Name is the hop's stable name (docs/doctor.md lists them).
	Name    string  `json:"hop"`
	Outcome Outcome `json:"outcome"`
	// Latency is how long the hop took.
	Latency Millis `json:"latencyMs"`
	// Detail is what was seen: for a passing hop, its one line.
	Detail string `json:"detail,omitempty"`
	// Tried is what was tried (endpoint, URL with its token cut, offers).
	Tried string `json:"tried,omitempty"`
	// Error is the error as it came; Signature its class (what --repeat
	// groups by: "connection refused", "HTTP 403", "exit 127").
	Error     string `json:"error,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Cause says what the error means on this runtime; Fix what to change
	// (a config key, a flag, a command).
	Cause string `json:"cause,omitempty"`
	Fix   string `json:"fix,omitempty"`
}

// Failed reports whether the hop failed.
func (h Hop) Failed() bool { return h.Outcome == Fail }

// Runtime is what the runtime said of itself (CRI Version) and the flavour
// doctor took it for: the explanations and fixes depend on it.
type Runtime struct {
	Endpoint string  `json:"endpoint,omitempty"`
	Name     string  `json:"name,omitempty"`
	Version  string  `json:"version,omitempty"`
	API      string  `json:"apiVersion,omitempty"`
	Flavour  Flavour `json:"flavour,omitempty"`
}

// Target is what the streaming hops ran against.
type Target struct {
	Container string `json:"container,omitempty"`
	Pod       string `json:"pod,omitempty"`
	// Namespace and Node: the workstation mode's pod and where it runs.
	Namespace string   `json:"namespace,omitempty"`
	Node      string   `json:"podNode,omitempty"`
	Port      int32    `json:"port,omitempty"`
	Command   []string `json:"command,omitempty"`
}

// Cluster is what the workstation walk learned of the API server and of
// the user it took the kubeconfig's credentials for.
type Cluster struct {
	Server  string   `json:"server,omitempty"`
	Version string   `json:"version,omitempty"`
	User    string   `json:"user,omitempty"`
	Groups  []string `json:"groups,omitempty"`
}

// Report is one doctor run: the hops of the path in order, up to and
// including the first that failed, and with --repeat the summary of every
// run.
type Report struct {
	probe.Origin
	Mode    string  `json:"mode"`
	Runtime Runtime `json:"runtime,omitzero"`
	Target  Target  `json:"target,omitzero"`
	// Cluster is the API server and the user (kubeconfig mode).
	Cluster *Cluster `json:"cluster,omitempty"`
	// OK: no hop failed in any run.
	OK bool `json:"ok"`
	// Hops are the first failed run's hops (the last run's when none
	// failed).
	Hops []Hop `json:"hops"`
	// Repeat summarises --repeat (nil for a single run).
	Repeat *Repeat `json:"repeat,omitempty"`
	// Error is set when the run could not finish (interrupted).
	Error string `json:"error,omitempty"`
	// NodeSide is the node half's report (--kubeconfig --node-side),
	// walked on the pod's node.
	NodeSide *Report `json:"nodeSide,omitempty"`
}

// newReport stamps an empty report of mode made on node.
func newReport(mode, node string) *Report {
	return &Report{
		Origin: probe.Origin{Schema: SchemaVersion, Kind: Kind, Node: node},
		Mode:   mode,
	}
}

// finish stamps the report's time and verdict.
func (r *Report) finish() {
	r.Time = time.Now().UTC()
	r.OK = r.Error == ""
	for _, h := range r.Hops {
		if h.Failed() {
			r.OK = false
		}
	}
	if r.Repeat != nil && r.Repeat.FailedRuns > 0 {
		r.OK = false
	}
	r.mergeNodeSide()
}

// FirstFailure returns the failed hop of the report's hops, if any.
func (r *Report) FirstFailure() (Hop, bool) {
	for _, h := range r.Hops {
		if h.Failed() {
			return h, true
		}
	}
	return Hop{}, false
}
