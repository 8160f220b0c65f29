package report

import (
	"fmt"
	"strings"
)

// Matrix is the checks-by-nodes table of one kind. Nodes whose every
// outcome is the same share a column, so that a thousand healthy nodes
// make one column, not a thousand.
type Matrix struct {
	Kind    string
	Checks  []string // rows, in the order the reports list them
	Columns []Column
}

// Column is a group of nodes with identical outcomes.
type Column struct {
	Nodes    []string
	Outcomes []Outcome // one per check; "" where the node has no such check
	Failed   bool
}

// Label names the column: its first node, and how many more it stands for.
func (c Column) Label() string {
	if len(c.Nodes) == 1 {
		return c.Nodes[0]
	}
	return fmt.Sprintf("%s (+%d)", c.Nodes[0], len(c.Nodes)-1)
}

// MatrixOf builds the matrix of the runs of one kind; failing columns come first.
func (f *Fleet) MatrixOf(kind string) Matrix {
	m := Matrix{Kind: kind}
	row := map[string]int{}
	runs := f.RunsOf(kind)
	for _, r := range runs {
		for _, c := range r.Cells {
			if _, ok := row[c.Check]; !ok {
				row[c.Check] = len(m.Checks)
				m.Checks = append(m.Checks, c.Check)
			}
		}
	}
	col := map[string]int{}
	for _, r := range runs {
		out := make([]Outcome, len(m.Checks))
		for _, c := range r.Cells {
			out[row[c.Check]] = c.Outcome
		}
		var key strings.Builder
		for _, o := range out {
			key.WriteString(string(o) + "\x00")
		}
		if i, ok := col[key.String()]; ok {
			m.Columns[i].Nodes = append(m.Columns[i].Nodes, r.Node)
			continue
		}
		col[key.String()] = len(m.Columns)
		m.Columns = append(m.Columns, Column{Nodes: []string{r.Node}, Outcomes: out, Failed: r.Failed()})
	}
	var failed, passed []Column
	for _, c := range m.Columns {
		if c.Failed {
			failed = append(failed, c)
		} else {
			passed = append(passed, c)
		}
	}
	m.Columns = append(failed, passed...)
	return m
}

// cellText is how an outcome reads in a table: failures stand out.
func cellText(o Outcome) string {
	switch o {
	case "":
		return "-"
	case Fail:
		return "FAIL"
	}
	return string(o)
}
