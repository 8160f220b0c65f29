// The long help and the examples of crisp's commands are text files in
// help/, so that the commands' files keep only their wiring. For a
// command named NAME (the first word of its Use), NAME.txt is its Long text
// (description, then the EXIT STATUS section) and NAME.example.txt its
// Example. Each file ends with one newline that is not part of the text.

package main

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed help/*.txt
var helpFiles embed.FS

const helpExampleSuffix = ".example.txt"

// helpLong is the long help of the command named name; it panics when there is
// none, so that a command cannot show an empty help.
func helpLong(name string) string { return helpText(name + ".txt") }

// helpExample is the examples of the command named name; it panics when there
// are none.
func helpExample(name string) string { return helpText(name + helpExampleSuffix) }

func helpText(file string) string {
	b, err := helpFiles.ReadFile("help/" + file)
	if err != nil {
		panic(fmt.Sprintf("helptext: no %s: %v", file, err))
	}
	s := strings.TrimSuffix(string(b), "\n")
	if strings.TrimSpace(s) == "" {
		panic(fmt.Sprintf("helptext: %s is empty", file))
	}
	return s
}

// helpNames lists the commands that have a text: the tests check that each is
// used by a command.
func helpNames() []string {
	entries, err := fs.ReadDir(helpFiles, "help")
	if err != nil {
		panic(err) // the embedded root always reads
	}
	seen := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, helpExampleSuffix) {
			seen[strings.TrimSuffix(n, ".txt")] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
