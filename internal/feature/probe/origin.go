package probe

import (
	"os"
	"strings"
	"time"
)

// SchemaVersion is the version of the JSON shape of smoke and probe reports.
// It goes up when a field changes meaning or goes away (new fields do not
// bump it), so that a tool merging reports of many nodes (crisp report) can
// refuse a shape it does not know rather than misread it.
const SchemaVersion = 1

// Report kinds, as the "kind" field of a report says.
const (
	KindSmoke = "smoke"
	KindProbe = "probe"
)

// Origin says what a report is and where it was made: the fields that let
// the reports of a whole fleet be told apart and merged. It is embedded in
// SmokeReport and ProbeReport, so its fields sit at the top of their JSON.
type Origin struct {
	Schema int    `json:"schemaVersion"`
	Kind   string `json:"kind"`
	// Node is the name of the machine the report was made on (--node-name,
	// $NODE_NAME, or the hostname).
	Node string `json:"node"`
	// Time is when the report was made (the run's end), so that of two
	// reports of a node the later one can be told, whatever order a log
	// stream puts them in.
	Time time.Time `json:"time,omitzero"`
}

// NewOrigin stamps a report of kind made on node now with this SchemaVersion.
func NewOrigin(kind, node string) Origin {
	return Origin{Schema: SchemaVersion, Kind: kind, Node: node, Time: time.Now().UTC()}
}

// NodeName picks the node's name: flag when given, else the NODE_NAME
// environment variable (what a DaemonSet sets from the downward API), else
// the hostname; getenv and hostname are os.Getenv and os.Hostname when nil.
func NodeName(flag string, getenv func(string) string, hostname func() (string, error)) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if hostname == nil {
		hostname = os.Hostname
	}
	if n := strings.TrimSpace(flag); n != "" {
		return n
	}
	if n := strings.TrimSpace(getenv("NODE_NAME")); n != "" {
		return n
	}
	if n, err := hostname(); err == nil && n != "" {
		return n
	}
	return "unknown"
}
