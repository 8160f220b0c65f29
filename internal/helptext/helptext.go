// Package helptext holds the long help and the examples of crisp's commands
// as text files, so that cmd/crisp keeps only the commands' wiring. For a
// command named NAME (the first word of its Use), NAME.txt is its Long text
// (description, then the EXIT STATUS section) and NAME.example.txt its
// Example. Each file ends with one newline that is not part of the text.
package helptext

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.txt
var files embed.FS

const exampleSuffix = ".example.txt"

// Long is the long help of the command named name; it panics when there is
// none, so that a command cannot show an empty help.
func Long(name string) string { return text(name + ".txt") }

// Example is the examples of the command named name; it panics when there
// are none.
func Example(name string) string { return text(name + exampleSuffix) }

func text(file string) string {
	b, err := files.ReadFile(file)
	if err != nil {
		panic(fmt.Sprintf("helptext: no %s: %v", file, err))
	}
	s := strings.TrimSuffix(string(b), "\n")
	if strings.TrimSpace(s) == "" {
		panic(fmt.Sprintf("helptext: %s is empty", file))
	}
	return s
}

// Names lists the commands that have a text: the tests check that each is
// used by a command.
func Names() []string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err) // the embedded root always reads
	}
	seen := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, exampleSuffix) {
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
