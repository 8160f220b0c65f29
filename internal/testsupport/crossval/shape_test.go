package crossval

import (
	"strings"
	"testing"
)

func TestPaths(t *testing.T) {
	got, err := Paths([]byte(`{"a": {"b": [1, "x", null]}, "c": true, "d": "4194304", "e": {}}` + "\n" + `{"f": []}`))
	if err != nil {
		t.Fatal(err)
	}
	want := ". object|a object|a.b array|a.b[] null|a.b[] number|a.b[] string|c boolean|d string|e object|f array"
	if strings.Join(got, "|") != want {
		t.Errorf("Paths:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	for _, bad := range []string{"", "{", "{} x"} {
		if _, err := Paths([]byte(bad)); err == nil {
			t.Errorf("Paths(%q): want an error", bad)
		}
	}
}

func TestCompare(t *testing.T) {
	crictl := `{"info": {"pid": 1, "config": {"x": "y"}}, "status": {"size": "10", "labels": {}}}`
	for _, tt := range []struct {
		name, crisp string
		diffs       []string
	}{
		{"same shape, other values", `{"status": {"labels": {"k": "v"}, "size": "99"}, "info": {"config": {"x": ""}, "pid": 7}}`,
			[]string{"status.labels.k: want absent, got string"}},
		{"nested one level deeper", `{"info": {"info": {"pid": 1}}, "status": {"size": "10", "labels": {}}}`,
			[]string{"info.config: want object, got absent", "info.config.x: want string, got absent",
				"info.info: want absent, got object", "info.info.pid: want absent, got number", "info.pid: want number, got absent"}},
		{"a string where crictl has an object", `{"info": {"pid": 1, "config": "{}"}, "status": {"size": 10, "labels": {}}}`,
			[]string{"info.config: want object, got string", "info.config.x: want string, got absent", "status.size: want string, got number"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			diffs, n, err := Compare([]byte(crictl), []byte(tt.crisp))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range diffs {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.diffs, "\n") {
				t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.diffs, "\n"))
			}
			if n < 7 {
				t.Errorf("%d paths compared, want the union of both (at least crictl's 7)", n)
			}
		})
	}
}

func TestCheckYAML(t *testing.T) {
	c := Case{Name: "x", YAML: true}
	r, err := c.Check([]byte("status:\n  size: \"10\"\n  id: abc\n"), []byte("status:\n  id: abc\n  size: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Differences) != 1 || r.Differences[0].Path != "status.size" {
		t.Errorf("want status.size to differ (string against number); got %v", r.Differences)
	}
	if _, err := c.Check([]byte("a: [\n"), []byte("a: 1\n")); err == nil {
		t.Error("crictl's malformed YAML: want an error")
	}
}
