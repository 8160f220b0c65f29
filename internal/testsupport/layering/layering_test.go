package layering

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const module = "github.com/crisp-cri/crisp"

type pkg struct {
	ImportPath string
	Imports    []string
	// Pulled is what the package brings in itself: its imports, and what
	// they import in turn through code outside the module. A crisp package
	// it imports answers for its own imports under its own rules, so a
	// rule speaks of what its package pulls in, not of what a lower layer
	// it is allowed to use does (probe may reach websocket through
	// transport, not by itself).
	Pulled []string
}

// listPackages returns every package of the module with what it pulls in.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Module", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	var own []string
	dec := json.NewDecoder(out)
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		imports[p.ImportPath] = p.Imports
		if p.Module != nil && p.Module.Path == module {
			own = append(own, p.ImportPath)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(own) == 0 {
		t.Fatal("go list found no package of the module")
	}
	var pkgs []pkg
	for _, path := range own {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(p string) {
			for _, d := range imports[p] {
				if seen[d] {
					continue
				}
				seen[d] = true
				if !strings.HasPrefix(d, module+"/") {
					walk(d)
				}
			}
		}
		walk(path)
		pulled := make([]string, 0, len(seen))
		for d := range seen {
			pulled = append(pulled, d)
		}
		pkgs = append(pkgs, pkg{ImportPath: path, Imports: imports[path], Pulled: pulled})
	}
	return pkgs
}

// depguardRules reads the layering rules from .golangci.yml's depguard
// section, crisp's one list of them: depguard checks each file's direct
// imports when linting; TestLayering checks every package's transitive
// imports against the same list, so the two cannot drift apart.
func depguardRules(t *testing.T) map[string]depguardRule {
	t.Helper()
	data, err := os.ReadFile("../../../.golangci.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Linters struct {
			Settings struct {
				Depguard struct {
					Rules map[string]depguardRule `json:"rules"`
				} `json:"depguard"`
			} `json:"settings"`
		} `json:"linters"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".golangci.yml: %v", err)
	}
	rules := cfg.Linters.Settings.Depguard.Rules
	if len(rules) == 0 {
		t.Fatal(".golangci.yml has no depguard rules")
	}
	return rules
}

type depguardRule struct {
	Files []string `json:"files"`
	Deny  []struct {
		Pkg  string `json:"pkg"`
		Desc string `json:"desc"`
	} `json:"deny"`
}

// appliesTo says whether the rule's file globs take in the package at rel
// (a path relative to the module). Only the glob shapes the list uses are
// understood ("**/DIR/**", its negation, and "!$test", which the package
// graph honours by itself: go list's Deps leave test imports out); any other
// shape fails the test rather than being skipped.
func (r depguardRule) appliesTo(t *testing.T, rel string) bool {
	if len(r.Files) == 0 {
		return true
	}
	dir := "/" + rel + "/"
	in := false
	for _, g := range r.Files {
		if g == "!$test" {
			continue
		}
		neg := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		inner, ok := strings.CutPrefix(g, "**/")
		if ok {
			inner, ok = strings.CutSuffix(inner, "/**")
		}
		if !ok || strings.Contains(inner, "*") {
			t.Fatalf("layering: .golangci.yml glob %q has a shape this test does not read", g)
		}
		if strings.Contains(dir, "/"+inner+"/") {
			if neg {
				return false
			}
			in = true
		}
	}
	return in
}

func TestLayering(t *testing.T) {
	rules := depguardRules(t)
	pkgs := listPackages(t)
	checked := map[string]int{}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		for name, r := range rules {
			if !r.appliesTo(t, rel) {
				continue
			}
			checked[name]++
			for _, dep := range p.Pulled {
				for _, d := range r.Deny {
					if strings.HasPrefix(dep, d.Pkg) {
						t.Errorf("%s depends on %s (rule %s): %s", rel, dep, name, d.Desc)
					}
				}
			}
		}
	}
	for name := range rules {
		if checked[name] == 0 {
			t.Errorf("rule %s applies to no package: its globs name a folder that is gone", name)
		}
	}
}

// TestLayersShowInTheTree keeps internal/ grouped by layer: every package
// sits under one of the layer folders (docs/design.md's layer table), so a
// new one has to pick its layer.
func TestLayersShowInTheTree(t *testing.T) {
	var layers []string
	for _, l := range designLayers(t) {
		if strings.HasPrefix(l.folder, "internal/") {
			layers = append(layers, l.folder)
		}
	}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		if !strings.HasPrefix(rel, "internal/") {
			continue
		}
		ok := false
		for _, l := range layers {
			if inFolder(rel, l) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s is in no layer folder (%s)", rel, strings.Join(layers, ", "))
		}
	}
}

// TestNoStdoutOrExitOutsideMain keeps os.Stdout and os.Exit in cmd/crisp:
// deep code writes to injected streams and returns errors.
func TestNoStdoutOrExitOutsideMain(t *testing.T) {
	// testdata holds the tests' own helper programs (the echo server, the
	// hostile container's swapper): binaries of their own, not crisp.
	out, err := exec.Command("git", "-C", "../../..", "grep", "-n", "-E", `os\.Stdout|os\.Exit\(|fmt\.Print(f|ln)?\(`, "--", "internal/*.go", ":!*_test.go", ":!*/testdata/*").CombinedOutput()
	if err != nil && len(out) == 0 {
		return // git grep exits 1 when nothing matches
	}
	if err != nil && !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("git grep: %v: %s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// file:line:code; a mention in a comment is no call.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.HasPrefix(strings.TrimSpace(parts[2]), "//") {
			continue
		}
		if line != "" {
			t.Errorf("stdout or exit outside cmd/crisp: %s", line)
		}
	}
}
