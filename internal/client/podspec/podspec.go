// Package podspec reads the pod sandbox and container configuration files
// that crictl's runp, create and run take: JSON or YAML with the CRI
// message's field names (log_directory, port_mappings, ...). A malformed
// file is an error that names the file and the line. It knows files and CRI
// messages, not gRPC or the command line.
package podspec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/base/input"
)

// Error is a configuration file that cannot be used: File and, where the
// problem has a place, Line (1-based; 0 when unknown).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// LoadPod reads a pod sandbox config. As crictl does, metadata.name and
// metadata.namespace are required and a missing metadata.uid is made up.
func LoadPod(ctx context.Context, path string) (*runtimeapi.PodSandboxConfig, error) {
	data, err := readFile(ctx, path)
	if err != nil {
		return nil, err
	}
	var cfg runtimeapi.PodSandboxConfig
	if err := Decode(path, data, &cfg); err != nil {
		return nil, err
	}
	if err := ValidatePod(path, data, &cfg); err != nil {
		return nil, err
	}
	if cfg.Metadata.Uid == "" {
		cfg.Metadata.Uid = newUID()
	}
	return &cfg, nil
}

// LoadContainer reads a container config; metadata.name is required.
func LoadContainer(ctx context.Context, path string) (*runtimeapi.ContainerConfig, error) {
	data, err := readFile(ctx, path)
	if err != nil {
		return nil, err
	}
	var cfg runtimeapi.ContainerConfig
	if err := Decode(path, data, &cfg); err != nil {
		return nil, err
	}
	if err := ValidateContainer(path, data, &cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// ValidatePod checks what every runtime needs of a pod config.
func ValidatePod(path string, data []byte, cfg *runtimeapi.PodSandboxConfig) error {
	if cfg.GetMetadata() == nil {
		return &Error{File: path, Msg: "metadata is not set (a pod config needs metadata.name and metadata.namespace)"}
	}
	var missing []string
	if cfg.GetMetadata().GetName() == "" {
		missing = append(missing, "metadata.name")
	}
	if cfg.GetMetadata().GetNamespace() == "" {
		missing = append(missing, "metadata.namespace")
	}
	if len(missing) > 0 {
		return &Error{File: path, Line: lineOf(data, "metadata"), Msg: strings.Join(missing, " and ") + " not set"}
	}
	return nil
}

// ValidateContainer checks what every runtime needs of a container config.
func ValidateContainer(path string, data []byte, cfg *runtimeapi.ContainerConfig) error {
	if cfg.GetMetadata() == nil {
		return &Error{File: path, Msg: "metadata is not set (a container config needs metadata.name)"}
	}
	if cfg.GetMetadata().GetName() == "" {
		return &Error{File: path, Line: lineOf(data, "metadata"), Msg: "metadata.name not set"}
	}
	if cfg.GetImage().GetImage() == "" {
		return &Error{File: path, Msg: "image.image not set (which image should the container run?)"}
	}
	return nil
}

// readFile reads a config file, bounded (input.MaxConfig) and interruptible:
// /dev/zero or a FIFO nobody writes to must not hold crisp.
func readFile(ctx context.Context, path string) ([]byte, error) {
	data, err := input.ReadFile(ctx, path, input.MaxConfig)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &Error{File: path, Msg: "config file not found"}
	}
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return data, nil
}

// Decode fills into (a CRI message) from JSON or YAML, as crictl does: a
// document whose first non-blank byte is '{' is JSON, anything else YAML.
// Errors carry name and, when it can be found, the line.
func Decode(name string, data []byte, into any) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return &Error{File: name, Msg: "the file is empty"}
	}
	jsonData := data
	if trimmed[0] != '{' {
		var node yaml.Node
		if err := yaml.Unmarshal(data, &node); err != nil {
			return yamlError(name, err)
		}
		if node.Kind == yaml.DocumentNode && len(node.Content) == 1 && node.Content[0].Kind != yaml.MappingNode {
			line := min(node.Content[0].Line, lineAt(data, len(data)))
			return &Error{File: name, Line: line, Msg: "want a mapping of the config's fields"}
		}
		converted, err := sigsyaml.YAMLToJSON(data)
		if err != nil {
			return yamlError(name, err)
		}
		jsonData = converted
	}
	dec := json.NewDecoder(bytes.NewReader(jsonData))
	err := dec.Decode(into)
	if err == nil {
		if dec.More() {
			return &Error{File: name, Line: lineAt(data, int(dec.InputOffset())), Msg: "unexpected data after the config's closing brace"}
		}
		return nil
	}
	return jsonError(name, data, trimmed[0] == '{', err)
}

// jsonError places a decoding error: by byte offset in a JSON file, by the
// field's path in a YAML one (offsets there count the converted JSON).
func jsonError(name string, data []byte, isJSON bool, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return &Error{File: name, Line: lineAt(data, int(syntax.Offset)), Msg: "invalid JSON: " + syntax.Error()}
	case errors.As(err, &typ):
		msg := fmt.Sprintf("%s: got a JSON %s, want %s", fieldName(typ.Field), typ.Value, goKind(typ.Type.String()))
		line := 0
		if typ.Field != "" {
			line = lineOf(data, typ.Field)
		}
		if line == 0 && isJSON {
			line = lineAt(data, int(typ.Offset))
		}
		return &Error{File: name, Line: line, Msg: msg}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{File: name, Line: lineAt(data, len(data)), Msg: "the config ends early (an unclosed brace or bracket?)"}
	}
	return &Error{File: name, Msg: err.Error()}
}

func fieldName(f string) string {
	if f == "" {
		return "the config"
	}
	return f
}

// goKind words a Go type the way a config author thinks of it.
func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case strings.HasPrefix(t, "[]uint8"):
		return "a base64 string"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.Contains(t, "int"):
		return "an integer"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "v1.") || strings.HasPrefix(t, "*v1."):
		return "a mapping"
	}
	return t
}

// yamlError turns "yaml: line 3: mapping values are not allowed" into an
// Error on line 3.
func yamlError(name string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ":"); i > 0 {
			if n, convErr := strconv.Atoi(rest[:i]); convErr == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	return &Error{File: name, Line: line, Msg: "invalid YAML: " + msg}
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// lineOf finds the line of a dotted field path (metadata.name,
// port_mappings.container_port) in a JSON or YAML document, or 0.
func lineOf(data []byte, path string) int {
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil || len(node.Content) == 0 {
		return 0
	}
	return findPath(node.Content[0], strings.Split(path, "."))
}

func findPath(n *yaml.Node, path []string) int {
	if len(path) == 0 {
		return n.Line
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if strings.EqualFold(n.Content[i].Value, path[0]) {
				if len(path) == 1 {
					return n.Content[i].Line
				}
				return findPath(n.Content[i+1], path[1:])
			}
		}
	case yaml.SequenceNode:
		// encoding/json names list elements by the field alone: the
		// first element that has the rest of the path is the best guess.
		for _, el := range n.Content {
			if line := findPath(el, path); line > 0 {
				return line
			}
		}
	}
	return 0
}

// newUID is a random RFC 4122 version 4 UUID, as crictl makes for a pod
// config without metadata.uid.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
