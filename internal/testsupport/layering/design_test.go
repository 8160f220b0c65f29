package layering

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// designLayer is a row of docs/design.md's layer table.
type designLayer struct {
	name, folder string
	imports      []string
}

// designLayers reads the table between docs/design.md's layers markers:
// | layer | folder | imports from |, the last a comma-separated list of
// layer names, each perhaps followed by a note in parentheses.
func designLayers(t *testing.T) []designLayer {
	t.Helper()
	data, err := os.ReadFile("../../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, "<!-- layers:begin"), strings.Index(doc, "<!-- layers:end")
	if begin < 0 || end < begin {
		t.Fatal("docs/design.md has no <!-- layers:begin --> ... <!-- layers:end --> table")
	}
	note := regexp.MustCompile(`\(.*?\)`)
	var layers []designLayer
	for _, line := range strings.Split(doc[begin:end], "\n")[1:] {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 3 || strings.TrimSpace(cells[0]) == "layer" || strings.HasPrefix(strings.TrimSpace(cells[0]), "-") {
			continue
		}
		l := designLayer{name: strings.TrimSpace(cells[0]), folder: strings.TrimSpace(cells[1])}
		for _, imp := range strings.Split(note.ReplaceAllString(cells[2], ""), ",") {
			if imp = strings.TrimSpace(imp); imp != "" {
				l.imports = append(l.imports, imp)
			}
		}
		layers = append(layers, l)
	}
	if len(layers) == 0 {
		t.Fatal("docs/design.md's layer table has no rows")
	}
	return layers
}

// TestDesignLayers keeps docs/design.md's layer table (and so its diagram)
// true: every package of internal/ and cmd/ sits in a layer's folder, and
// the layers the module's non-test code imports from each layer are
// exactly the table's.
func TestDesignLayers(t *testing.T) {
	layers := designLayers(t)
	layerOf := func(path string) string {
		rel := strings.TrimPrefix(path, module+"/")
		for _, l := range layers {
			if inFolder(rel, l.folder) {
				return l.name
			}
		}
		return ""
	}
	actual := map[string]map[string][]string{} // layer -> imported layer -> example imports
	for _, p := range listPackages(t) {
		if rel := strings.TrimPrefix(p.ImportPath, module+"/"); !strings.HasPrefix(rel, "internal/") && !strings.HasPrefix(rel, "cmd/") {
			continue // deploy's manifest test and scripts' helpers are no part of crisp's layers
		}
		from := layerOf(p.ImportPath)
		if from == "" {
			t.Errorf("%s is in no layer of docs/design.md's table", p.ImportPath)
			continue
		}
		for _, d := range p.Imports {
			if !strings.HasPrefix(d, module+"/") {
				continue
			}
			if to := layerOf(d); to != "" && to != from {
				if actual[from] == nil {
					actual[from] = map[string][]string{}
				}
				actual[from][to] = append(actual[from][to], p.ImportPath+" -> "+d)
			}
		}
	}
	for _, l := range layers {
		for _, imp := range l.imports {
			if !slices.ContainsFunc(layers, func(o designLayer) bool { return o.name == imp }) {
				t.Errorf("docs/design.md: layer %s imports from %q, which is no layer of the table", l.name, imp)
			} else if actual[l.name][imp] == nil {
				t.Errorf("docs/design.md says %s imports from %s, but no package does: drop it from the table", l.name, imp)
			}
		}
		var undocumented []string
		for to := range actual[l.name] {
			if !slices.Contains(l.imports, to) {
				undocumented = append(undocumented, to)
			}
		}
		sort.Strings(undocumented)
		for _, to := range undocumented {
			t.Errorf("%s imports from %s (%s), which docs/design.md's layer table does not say: fix the import or the table and its diagram",
				l.name, to, strings.Join(actual[l.name][to], ", "))
		}
	}
}

// inFolder says whether the package at rel (relative to the module) is the
// folder itself or lies beneath it: the card's packages (internal/client,
// internal/transport, internal/tty) are layer folders and packages at once.
func inFolder(rel, folder string) bool {
	return strings.HasPrefix(rel+"/", strings.TrimSuffix(folder, "/")+"/")
}
