package probe

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNodeName(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "NODE_NAME" {
				return v
			}
			return ""
		}
	}
	host := func(n string, err error) func() (string, error) { return func() (string, error) { return n, err } }
	for _, tc := range []struct {
		name, flag, env, host string
		hostErr               error
		want                  string
	}{
		{"flag wins", "n-flag", "n-env", "n-host", nil, "n-flag"},
		{"env next", "", "n-env", "n-host", nil, "n-env"},
		{"blank env is unset", " ", " ", "n-host", nil, "n-host"},
		{"hostname last", "", "", "n-host", nil, "n-host"},
		{"nothing known", "", "", "", errors.New("no hostname"), "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NodeName(tc.flag, env(tc.env), host(tc.host, tc.hostErr)); got != tc.want {
				t.Errorf("NodeName = %q, want %q", got, tc.want)
			}
		})
	}
}

// The origin's fields sit at the top level of both reports' JSON.
func TestOriginInJSON(t *testing.T) {
	for _, v := range []any{
		&SmokeReport{Origin: NewOrigin(KindSmoke, "node-a")},
		&ProbeReport{Origin: NewOrigin(KindProbe, "node-a")},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var top map[string]any
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
		if top["schemaVersion"] != float64(SchemaVersion) || top["node"] != "node-a" || !strings.Contains("smoke probe", top["kind"].(string)) {
			t.Errorf("JSON lacks the origin at its top: %s", b)
		}
	}
}
