package probe

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

func registryNames(suite Suite, call Call) []string {
	var names []string
	for _, d := range ChecksFor(suite, call) {
		names = append(names, d.Name)
	}
	return names
}

func findDef(t *testing.T, suite Suite, call Call, name string) CheckDef {
	t.Helper()
	for _, d := range ChecksFor(suite, call) {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("%s check %q of %s is not in the registry", suiteName(suite), name, call)
	return CheckDef{}
}

func suiteName(s Suite) string {
	if s == SuiteProbe {
		return "probe"
	}
	return "smoke"
}

func TestRegistryIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	calls := map[Call]bool{}
	for _, row := range Matrix() {
		calls[row.Call] = true
	}
	for _, d := range Checks() {
		if d.Name == "" || d.Run == nil || d.Suites&(SuiteProbe|SuiteSmoke) == 0 || !calls[d.Call] {
			t.Errorf("incomplete check %+v", d)
		}
		for _, s := range []Suite{SuiteProbe, SuiteSmoke} {
			if d.Suites&s == 0 {
				continue
			}
			key := suiteName(s) + "/" + string(d.Call) + "/" + d.Name
			if seen[key] {
				t.Errorf("%s declared twice", key)
			}
			seen[key] = true
		}
		for _, n := range d.Needs {
			if missing(string(n), Protocol{Transport: transport.SPDY, Name: "x"}) == "spdy x cannot carry "+string(n) {
				t.Errorf("%s needs %q, which has no reason worded for reports", d.Name, n)
			}
		}
	}
}

// Every check in probe's and smoke's reports comes from the registry, in
// its order, and one lacking a capability is skipped with the reason.
func TestRegistryIsTheSingleSource(t *testing.T) {
	f := fakeProfile(t, "full")
	target := Target{ContainerID: "c1", PodID: "p1", Port: f.echoPort}
	p := &Prober{URLs: f, Streamer: f, Timeout: 2 * time.Second}
	prep, err := p.Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	srep, err := (&Smoker{URLs: f, Streamer: f, Timeout: 5 * time.Second}).Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}

	capSkips := 0
	judge := func(suite Suite, call Call, proto Protocol, c Check) {
		d := findDef(t, suite, call, c.Name)
		if why, skip := d.Skipped(proto, capabilities(call, proto)); skip {
			capSkips++
			if c.Outcome != Skip || c.Detail != why {
				t.Errorf("%s %s %s/%s: %s %q, want skipped: %q", suiteName(suite), call, proto, c.Name, c.Outcome, c.Detail, why)
			}
		}
	}

	for _, r := range prep.Results {
		var got []string
		for _, c := range r.Checks {
			got = append(got, c.Name)
			judge(SuiteProbe, r.Call, r.Protocol, c)
		}
		// The fake accepts everything of "full" and echoes on the port:
		// every probe check of the call runs (none is left out by a chain).
		if want := registryNames(SuiteProbe, r.Call); r.Accepted && !slices.Equal(got, want) {
			t.Errorf("probe %s %s ran %v, the registry has %v", r.Call, r.Protocol, got, want)
		}
	}

	ran := map[string][]string{}
	for _, c := range srep.Checks {
		if c.Check.Name == SmokeHandshake {
			continue // the handshake is smoke's verdict on the matrix, not a check
		}
		key := string(c.Call) + "/" + c.String()
		ran[key] = append(ran[key], c.Check.Name)
		judge(SuiteSmoke, c.Call, *c.Protocol, c.Check)
	}
	if len(ran) == 0 {
		t.Fatal("smoke ran no checks")
	}
	for key, got := range ran {
		call := Call(key[:strings.IndexByte(key, '/')])
		if want := registryNames(SuiteSmoke, call); !slices.Equal(got, want) {
			t.Errorf("smoke %s ran %v, the registry has %v", key, got, want)
		}
	}
	if capSkips == 0 {
		t.Error("no check was skipped for a missing capability: the test proves nothing")
	}
}

// Adding a check is one registry entry: both suites run it, and protocols
// without the capability it needs skip it.
func TestOneEntryReachesBothSuites(t *testing.T) {
	saved := registry
	t.Cleanup(func() { registry = saved })
	const name = "registry-test"
	registry = append(slices.Clone(saved), CheckDef{
		Name: name, Call: CallExec, Suites: SuiteProbe | SuiteSmoke, Needs: []Need{NeedResize},
		Run: func(_ context.Context, a *Attempt) Check {
			return Check{Outcome: Pass, Detail: "ran on " + a.Protocol.String()}
		},
	})
	f := fakeProfile(t, "full")
	target := Target{ContainerID: "c1", PodID: "p1"}
	p := &Prober{URLs: f, Streamer: f, Timeout: 2 * time.Second, Calls: []Call{CallExec}}
	prep, err := p.Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	srep, err := (&Smoker{URLs: f, Streamer: f, Timeout: 5 * time.Second}).Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	want := func(proto Protocol) Outcome {
		if capabilities(CallExec, proto).Resize {
			return Pass
		}
		return Skip
	}
	n := 0
	for _, r := range prep.Results {
		c, ok := r.Check(name)
		if !ok || c.Outcome != want(r.Protocol) {
			t.Errorf("probe %s: %+v (found %t), want %s", r.Protocol, c, ok, want(r.Protocol))
		}
		n++
	}
	for _, c := range srep.Checks {
		if c.Call == CallExec && c.Check.Name == name {
			if c.Outcome != want(*c.Protocol) {
				t.Errorf("smoke %s: %+v, want %s", c.Protocol, c.Check, want(*c.Protocol))
			}
			n++
		}
	}
	if protos := len(transport.Protocols(CallExec)); n != 2*protos {
		t.Errorf("the new check ran %d times, want once per exec protocol in each suite (%d)", n, 2*protos)
	}
}
