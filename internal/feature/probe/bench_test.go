package probe

import (
	"context"
	"math"
	"testing"
)

func TestSummarise(t *testing.T) {
	tests := []struct {
		in            []float64
		med, min, max float64
	}{
		{[]float64{3, 1, 2}, 2, 1, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
		{[]float64{7}, 7, 7, 7},
	}
	for _, tt := range tests {
		s := Summarise(tt.in)
		if s.Median != tt.med || s.Min != tt.min || s.Max != tt.max || s.Runs != len(tt.in) {
			t.Errorf("Summarise(%v) = %+v", tt.in, s)
		}
	}
	if s := Summarise(nil); !math.IsNaN(s.Median) || s.Runs != 0 {
		t.Errorf("Summarise(nil) = %+v, want NaN figures", s)
	}
}

func TestBenchFigures(t *testing.T) {
	f := fakeProfile(t, "full")
	b := &Bencher{URLs: f, Streamer: f, Size: 64 << 10, Runs: 3, LatencyRuns: 4}
	rep, err := b.Run(context.Background(), Target{ContainerID: "c1", PodID: "p1", Port: f.echoPort})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"exec websocket v5.channel.k8s.io", "exec spdy v5.channel.k8s.io", "exec websocket v4.channel.k8s.io",
		"port-forward spdy portforward.k8s.io", "port-forward websocket SPDY/3.1+portforward.k8s.io", "port-forward websocket v4.channel.k8s.io",
	}
	if len(rep.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(rep.Results), len(want))
	}
	for i, r := range rep.Results {
		if got := string(r.Call) + " " + r.String(); got != want[i] {
			t.Errorf("result %d is %s, want %s", i, got, want[i])
		}
		for _, fig := range r.Figures {
			if fig.Error != "" || fig.Skipped != "" || math.IsNaN(fig.Median) || fig.Median < 0 || len(fig.Values) != fig.Runs {
				t.Errorf("%s %s: %+v", got(r), fig.Name, fig)
			}
		}
	}
	if !rep.Results[0].Auto || !rep.Results[3].Auto || rep.Results[1].Auto {
		t.Errorf("auto marks wrong: %+v", rep.Results)
	}
}

func got(r BenchResult) string { return string(r.Call) + " " + r.String() }

func TestZeroCommands(t *testing.T) {
	tests := []struct {
		size         int64
		source, sink string
	}{
		{3 << 20, "dd if=/dev/zero bs=1048576 count=3 2>/dev/null", "dd bs=1048576 count=3 iflag=fullblock 2>/dev/null | wc -c"},
		{1<<20 + 5, "dd if=/dev/zero bs=1048576 count=1 2>/dev/null; head -c 5 /dev/zero", "head -c 1048581 | wc -c"},
		{100, "head -c 100 /dev/zero", "head -c 100 | wc -c"},
	}
	for _, tt := range tests {
		if got := zeroSource(tt.size); got != tt.source {
			t.Errorf("zeroSource(%d) = %q, want %q", tt.size, got, tt.source)
		}
		if got := zeroSink(tt.size); got != tt.sink {
			t.Errorf("zeroSink(%d) = %q, want %q", tt.size, got, tt.sink)
		}
	}
}
