package remotecommand

import (
	"net/url"

	"github.com/crisp-cri/crisp/internal/transport"
)

// spdyDial puts a read buffer beneath spdystream on plain http (see
// transport.BufferedConn); over https the TLS layer that the round tripper
// adds on top already reads whole records.
func spdyDial(u *url.URL, dial transport.DialFunc) transport.DialFunc {
	if u.Scheme == "https" {
		return dial
	}
	return transport.BufferedDial(dial)
}
