// Package crictlconfig reads and writes crictl's configuration file
// (crictl.yaml) key by key, as `crictl config` does: --get KEY, --set
// KEY=VALUE[,KEY=VALUE], --list. The file is edited as a YAML node tree,
// so comments and keys crisp does not know survive a --set.
package crictlconfig

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/crisp-cri/crisp/internal/base/input"
	"github.com/crisp-cri/crisp/internal/base/outfile"
	"github.com/crisp-cri/crisp/internal/cli/output"
)

// Keys are crictl's configuration keys, in the order it lists and writes
// them, with the kind of value each takes.
var Keys = []struct{ Name, Kind string }{
	{"runtime-endpoint", "str"},
	{"image-endpoint", "str"},
	{"timeout", "int"},
	{"debug", "bool"},
	{"pull-image-on-create", "bool"},
	{"disable-pull-on-run", "bool"},
	{"max-retries", "int"},
}

func kindOf(key string) string {
	for _, k := range Keys {
		if k.Name == key {
			return k.Kind
		}
	}
	return ""
}

// File is crictl.yaml as a node tree.
type File struct {
	Path  string
	doc   yaml.Node
	added map[string]string // keys Set that the file had not
}

// Open reads path; a missing file is written with every key at its zero
// value first, as crictl does.
func Open(path string) (*File, error) {
	f := &File{Path: path}
	data, err := readRegular(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := f.Write(); err != nil {
			return nil, err
		}
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("read config file: %w", err) // err names the path
	}
	if err := yaml.Unmarshal(data, &f.doc); err != nil {
		return nil, fmt.Errorf("config file %s is not YAML: %w", path, err)
	}
	if len(f.doc.Content) > 0 && f.doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config file %s: want key: value lines", path)
	}
	return f, nil
}

// readRegular reads path if it is a regular file (a link to one is read;
// Write refuses it). The open never blocks, as a FIFO's would until a
// writer came, and what it opened is checked, not what a stat saw.
func readRegular(path string) ([]byte, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fd.Close() }() // read-only
	fi, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, input.FileKind(fi.Mode()))
	}
	return io.ReadAll(fd)
}

func (f *File) mapping() *yaml.Node {
	if len(f.doc.Content) == 0 {
		f.doc.Kind = yaml.DocumentNode
		f.doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	return f.doc.Content[0]
}

// Get is key's value as crictl prints it: the zero value when unset.
func (f *File) Get(key string) (string, error) {
	kind := kindOf(key)
	if kind == "" {
		return "", fmt.Errorf("no configuration option named %s; the options are %s", key, names())
	}
	m := f.mapping()
	value := f.added[key]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			value = m.Content[i+1].Value
		}
	}
	switch {
	case value != "":
		return value, nil
	case kind == "int":
		return "0", nil
	case kind == "bool":
		return "false", nil
	}
	return "", nil
}

// Set sets key to value, checking the value's kind.
func (f *File) Set(key, value string) error {
	kind := kindOf(key)
	switch kind {
	case "":
		return fmt.Errorf("no configuration option named %s; the options are %s", key, names())
	case "int":
		if _, err := strconv.Atoi(value); err != nil {
			return fmt.Errorf("%s takes a whole number, not %q", key, value)
		}
	case "bool":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s takes true or false, not %q", key, value)
		}
		value = strconv.FormatBool(b)
	}
	m := f.mapping()
	found := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1].Value, m.Content[i+1].Tag, found = value, "!!"+kind, true
		}
	}
	if !found {
		// Written by Write, after the file's keys, in crictl's order.
		if f.added == nil {
			f.added = map[string]string{}
		}
		f.added[key] = value
	}
	return nil
}

// SetPairs applies --set values: KEY=VALUE, several separated by commas.
func (f *File) SetPairs(sets []string) error {
	for _, set := range sets {
		for opt := range strings.SplitSeq(set, ",") {
			key, value, ok := strings.Cut(opt, "=")
			if !ok || strings.Contains(value, "=") {
				return fmt.Errorf("--set wants KEY=VALUE (several separated by commas), not %q", set)
			}
			if err := f.Set(key, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// Write writes the file back with every key present, as crictl writes it.
func (f *File) Write() error {
	m := f.mapping()
	for _, k := range Keys {
		v, err := f.Get(k.Name)
		if err != nil {
			return err
		}
		if err := f.Set(k.Name, v); err != nil {
			return err
		}
		if v, ok := f.added[k.Name]; ok {
			m.Content = append(m.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.Name},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!" + k.Kind, Value: v})
			delete(f.added, k.Name)
		}
	}
	data, err := yaml.Marshal(&f.doc)
	if err != nil {
		return fmt.Errorf("config file %s: %w", f.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return fmt.Errorf("config file %s: %w", f.Path, err)
	}
	// A new file, renamed over the old one (outfile): a FIFO, link or
	// device at the path is refused, someone else's file never written into.
	perm := fs.FileMode(0o600)
	if fi, err := os.Lstat(f.Path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm() & 0o644 // readers keep reading it; no one else may write it
	}
	out, err := outfile.Create(f.Path, perm)
	if err == nil {
		_, err = out.Write(data)
		err = errors.Join(err, out.Close())
	}
	if err != nil {
		return fmt.Errorf("write config file: %w", err)
	}
	return nil
}

// List writes every key and its value as crictl's --list table.
func (f *File) List(w io.Writer) error {
	tw := output.NewTabWriter(w)
	output.Row(tw, "KEY", "VALUE")
	for _, k := range Keys {
		v, err := f.Get(k.Name)
		if err != nil {
			return err
		}
		output.Row(tw, k.Name, v)
	}
	return tw.Flush()
}

func names() string {
	var n []string
	for _, k := range Keys {
		n = append(n, k.Name)
	}
	return strings.Join(n, ", ")
}
