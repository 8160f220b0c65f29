package probe

import (
	"math"
	"slices"
)

// Stats summarises repeated measurements.
type Stats struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Runs   int       `json:"runs"`
	Values []float64 `json:"values"`
}

// Summarise computes the median, minimum and maximum of values (NaN
// figures for none). The median of an even count is the mean of the
// middle two.
func Summarise(values []float64) Stats {
	s := Stats{Runs: len(values), Values: append([]float64{}, values...)}
	if len(values) == 0 {
		s.Median, s.Min, s.Max = math.NaN(), math.NaN(), math.NaN()
		return s
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	s.Min, s.Max = sorted[0], sorted[n-1]
	if n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return s
}
