package main

import (
	"fmt"

	"github.com/crisp-cri/crisp/internal/probe"
)

// probeReachedNothing fails a probe in which no handshake got an HTTP answer
// (every attempt failed before the server could accept or refuse: a
// certificate crisp cannot verify, a client certificate the server wants,
// an unreachable streaming server). The matrix is printed either way; the
// error, with the first attempt's reason, makes the exit status 1.
func probeReachedNothing(rep *probe.ProbeReport) error {
	if len(rep.Results) == 0 {
		return nil
	}
	for _, r := range rep.Results {
		if r.Accepted || r.Status != 0 || r.Error == "" {
			return nil
		}
	}
	return fmt.Errorf("probe: no streaming handshake got an answer from the runtime; the first failed with: %s", rep.Results[0].Error)
}
