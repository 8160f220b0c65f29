package podspec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadPodJSONAndYAML(t *testing.T) {
	for name, content := range map[string]string{
		"pod.json": `{"metadata": {"name": "web", "namespace": "default", "uid": "u1"}, "log_directory": "/tmp/logs", "labels": {"app": "web"}}`,
		"pod.yaml": "metadata:\n  name: web\n  namespace: default\n  uid: u1\nlog_directory: /tmp/logs\nlabels:\n  app: web\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := LoadPod(context.Background(), write(t, name, content))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.GetMetadata().GetName() != "web" || cfg.GetLogDirectory() != "/tmp/logs" || cfg.GetLabels()["app"] != "web" || cfg.GetMetadata().GetUid() != "u1" {
				t.Errorf("got %v", cfg)
			}
		})
	}
}

func TestLoadPodMakesUpUID(t *testing.T) {
	cfg, err := LoadPod(context.Background(), write(t, "pod.yaml", "metadata: {name: web, namespace: default}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.GetMetadata().GetUid()) != 36 {
		t.Errorf("uid %q is not a UUID", cfg.GetMetadata().GetUid())
	}
}

func TestLoadContainer(t *testing.T) {
	cfg, err := LoadContainer(context.Background(), write(t, "ctr.json", `{"metadata": {"name": "c"}, "image": {"image": "busybox"}, "command": ["sh", "-c", "echo hi"], "log_path": "c.log", "envs": [{"key": "A", "value": "1"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &runtimeapi.ContainerConfig{}
	if cfg.GetImage().GetImage() != "busybox" || len(cfg.GetCommand()) != 3 || cfg.GetLogPath() != "c.log" || cfg.GetEnvs()[0].GetKey() != "A" {
		t.Errorf("got %v, want the fields of %v", cfg, want)
	}
}

// Every malformed config names the file and the line of the problem.
func TestErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		pod                 bool
		line                int
		msg                 string
	}{
		{"json syntax", "pod.json", "{\n  \"metadata\": {\n    \"name\": \"web\",,\n  }\n}\n", true, 3, "invalid JSON"},
		{"json type", "pod.json", "{\n  \"metadata\": {\n    \"name\": \"web\",\n    \"attempt\": \"one\"\n  }\n}\n", true, 4, "metadata.attempt: got a JSON string, want an integer"},
		{"json truncated", "pod.json", "{\n  \"metadata\": {\n", true, 3, "ends early"},
		{"yaml syntax", "pod.yaml", "metadata:\n  name: web\n namespace: x\n", true, 2, "invalid YAML"},
		{"yaml type", "pod.yaml", "metadata:\n  name: web\n  namespace: default\nport_mappings:\n  - container_port: eighty\n", true, 5, "port_mappings.container_port: got a JSON string, want an integer"},
		{"yaml not a mapping", "pod.yaml", "- a\n- b\n", true, 1, "want a mapping"},
		{"missing namespace", "pod.yaml", "labels: {}\nmetadata:\n  name: web\n", true, 2, "metadata.namespace not set"},
		{"no metadata", "pod.json", "{}", true, 0, "metadata is not set"},
		{"container no name", "ctr.yaml", "image: {image: busybox}\nmetadata: {}\n", false, 2, "metadata.name not set"},
		{"container no image", "ctr.yaml", "metadata: {name: c}\n", false, 0, "image.image not set"},
		{"empty", "ctr.yaml", "\n\n", false, 0, "empty"},
		{"trailing data", "ctr.json", "{\"metadata\": {\"name\": \"c\"}}\n{}\n", false, 2, "unexpected data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, tc.file, tc.content)
			var err error
			if tc.pod {
				_, err = LoadPod(context.Background(), path)
			} else {
				_, err = LoadContainer(context.Background(), path)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *podspec.Error", err)
			}
			if pe.File != path || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("got %q (line %d), want line %d and %q", err, pe.Line, tc.line, tc.msg)
			}
			if tc.line > 0 && !strings.HasPrefix(err.Error(), path+":") {
				t.Errorf("%q does not start with file:line", err)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := LoadPod(context.Background(), filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: config file not found") {
		t.Errorf("got %v", err)
	}
}

// FuzzDecode: no input panics, and every failure is an *Error naming the
// file with a line inside it.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"metadata": {"name": "web", "namespace": "default"}}`,
		"metadata:\n  name: web\n  namespace: default\n",
		"{\"metadata\": {\"attempt\": \"x\"}}",
		"metadata:\n  name: [\n",
		"port_mappings:\n  - container_port: x\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var cfg runtimeapi.PodSandboxConfig
		err := Decode("f.yaml", data, &cfg)
		if err == nil {
			return
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("%q: got %T %v, want *Error", data, err, err)
		}
		if pe.File != "f.yaml" || pe.Line < 0 || pe.Line > strings.Count(string(data), "\n")+strings.Count(string(data), "\r")+1 {
			t.Fatalf("%q: bad place in %v", data, err)
		}
	})
}
