package session

import (
	"testing"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// The streaming layer cannot import the CRI client, so its fallback bound
// on an upgrade is a constant of its own; it must stay the CRI call's
// default, the one 10 s crisp documents.
func TestUpgradeTimeoutIsTheRequestTimeout(t *testing.T) {
	if transport.DefaultUpgradeTimeout != client.DefaultRequestTimeout {
		t.Errorf("transport.DefaultUpgradeTimeout %s, client.DefaultRequestTimeout %s: one default, please",
			transport.DefaultUpgradeTimeout, client.DefaultRequestTimeout)
	}
}
