package cmdutil

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

// TestWayFlag: auto by default, a command's own ways taken, anything else a
// usage error naming them in auto's order.
func TestWayFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    Way
		wantErr string
	}{
		{nil, WayAuto, ""},
		{[]string{"--way", "root"}, "root", ""},
		{[]string{"--way", "host"}, "", `unknown --way "host": use auto, tar or root`},
	} {
		var w WayFlag
		cmd := &cobra.Command{Use: "x"}
		w.Bind(cmd, "how", "tar", "root")
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := w.Parse()
		if tc.wantErr != "" {
			if !errors.As(err, new(UsageError)) || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want the usage error %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}
