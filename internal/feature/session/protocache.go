package session

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// ProtocolCacheUsage is the help of exec's and attach's --protocol-cache.
const ProtocolCacheUsage = "with --transport auto, offer first the protocol this runtime (endpoint, name, version) accepted last time, remembered in the user's cache folder; -v shows it"

// protocolCache is the cache of accepted protocols for cli's runtime, or
// nil when off or when there is nowhere to keep it.
func protocolCache(on bool, cli *client.Client) *transport.ProtocolCache {
	path := transport.DefaultProtocolCachePath()
	if !on || path == "" {
		return nil
	}
	return &transport.ProtocolCache{
		Path:     path,
		Endpoint: cli.Endpoint,
		Identify: func(ctx context.Context) (string, error) {
			v, err := cli.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
			if err != nil {
				return "", err
			}
			return v.GetRuntimeName() + " " + v.GetRuntimeVersion(), nil
		},
	}
}
