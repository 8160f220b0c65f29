package streamserver

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The mock's profile table (which protocols each profile serves), written out here independently of the
// code's Protocols so that the test checks the code against the contract.
var (
	rcSPDYAll = []string{"channel.k8s.io", "v2.channel.k8s.io", "v3.channel.k8s.io", "v4.channel.k8s.io", "v5.channel.k8s.io"}
	rcWSAll   = []string{"channel.k8s.io", "base64.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io", "v5.channel.k8s.io"}
	pfSPDYAll = []string{"portforward.k8s.io"}
	pfWSAll   = []string{"v4.channel.k8s.io", "v4.base64.channel.k8s.io", "SPDY/3.1+portforward.k8s.io"}
	// Offered alone, never accepted by anyone.
	bogus = []string{"v6.channel.k8s.io", "SPDY/3.1+v4.channel.k8s.io", "portforward.k8s.io.v2"}
)

type profileTable struct {
	rcSPDY, rcWS, pfSPDY, pfWS []string // accepted subprotocols
}

var contract = map[Profile]profileTable{
	ProfileFull: {
		rcSPDY: rcSPDYAll,
		rcWS:   rcWSAll,
		pfSPDY: pfSPDYAll,
		pfWS:   pfWSAll,
	},
	ProfileCRIStreaming: {
		rcSPDY: []string{"channel.k8s.io", "v2.channel.k8s.io", "v3.channel.k8s.io", "v4.channel.k8s.io"},
		rcWS:   []string{"channel.k8s.io", "base64.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io"},
		pfSPDY: pfSPDYAll,
		pfWS:   []string{"v4.channel.k8s.io", "v4.base64.channel.k8s.io"},
	},
	ProfileConmonRS: {
		rcWS: []string{"v5.channel.k8s.io"},
		pfWS: []string{"SPDY/3.1+portforward.k8s.io"},
	},
	ProfileLegacy: {
		rcSPDY: []string{"channel.k8s.io", "v2.channel.k8s.io"},
		pfSPDY: pfSPDYAll,
	},
}

// TestAcceptanceTable offers every subprotocol alone, for every profile,
// endpoint and transport, and checks accept (101 and a working session on
// that protocol) or refuse (403 naming what is supported) against the
// contract; then it checks the token was consumed either way (404).
func TestAcceptanceTable(t *testing.T) {
	echoPort := echoListener(t)
	for _, profile := range Profiles {
		t.Run(string(profile), func(t *testing.T) {
			srv, _ := startServer(t, Config{Profile: profile})
			want := contract[profile]
			for _, kind := range []string{kindExec, kindAttach, kindPortForward} {
				for _, transport := range []string{"spdy", "websocket"} {
					var candidates, accepted []string
					switch {
					case kind != kindPortForward && transport == "spdy":
						candidates, accepted = rcSPDYAll, want.rcSPDY
					case kind != kindPortForward:
						candidates, accepted = rcWSAll, want.rcWS
					case transport == "spdy":
						candidates, accepted = append(slices.Clone(pfSPDYAll), rcSPDYAll...), want.pfSPDY
					default:
						candidates, accepted = append(slices.Clone(pfWSAll), "channel.k8s.io", "v5.channel.k8s.io"), want.pfWS
					}
					for _, proto := range append(slices.Clone(candidates), bogus...) {
						name := fmt.Sprintf("%s/%s/%s", kind, transport, proto)
						t.Run(name, func(t *testing.T) {
							t.Parallel()
							u := newURL(t, srv, kind, echoPort)
							var res upgradeResult
							if transport == "spdy" {
								res = checkSPDY(t, u, kind, proto, echoPort)
							} else {
								res = checkWebSocket(t, u, kind, proto, echoPort)
							}
							wantAccept := slices.Contains(accepted, proto)
							if wantAccept {
								mustEqual(t, "status", res.status, http.StatusSwitchingProtocols)
								mustEqual(t, "negotiated protocol", res.protocol, proto)
							} else {
								mustEqual(t, "status", res.status, http.StatusForbidden)
								// cri-streaming's WebSocket refusal (golang.org/x/net/websocket)
								// has an empty body, as on containerd; every other refusal
								// names what the server supports.
								if (profile != ProfileCRIStreaming || transport != "websocket") && !namesSupported(res.body, profile, kind, transport) {
									t.Fatalf("403 body %q names nothing the profile supports", res.body)
								}
							}
							// The token is gone, accepted or not.
							again := rawStatus(t, u, transport, proto)
							mustEqual(t, "status of a reused token", again, http.StatusNotFound)
						})
					}
				}
			}
		})
	}
}

func newURL(t *testing.T, srv Server, kind string, port int32) *url.URL {
	switch kind {
	case kindExec:
		return execURL(t, srv, &runtimeapi.ExecRequest{Cmd: []string{"echo", "hello"}, Stdout: true})
	case kindAttach:
		return attachURL(t, srv, &runtimeapi.AttachRequest{Stdout: true})
	default:
		return portForwardURL(t, srv, &runtimeapi.PortForwardRequest{Port: []int32{port}})
	}
}

func wantOutput(kind string) string {
	if kind == kindExec {
		return "hello\n"
	}
	return "attached to c1\n"
}

func checkSPDY(t *testing.T, u *url.URL, kind, proto string, port int32) upgradeResult {
	res, conn := spdyUpgrade(t, u, proto)
	if conn == nil {
		return res
	}
	if kind == kindPortForward {
		echo, errs := spdyForward(t, conn, port, 0, "ping "+proto)
		_ = conn.Close()
		mustEqual(t, "echo", echo, "ping "+proto)
		mustEqual(t, "error stream", errs, "")
		return res
	}
	out, errs := spdyRemoteCommand(t, conn)
	mustEqual(t, "stdout", out, wantOutput(kind))
	switch proto {
	case "v4.channel.k8s.io", "v5.channel.k8s.io", "v6.channel.k8s.io":
		mustEqual(t, "error stream", errs, `{"status":"Success"}`)
	default:
		// v1 resets its error stream at setup; v2 and v3 send nothing on success.
		mustEqual(t, "error stream", errs, "")
	}
	return res
}

func checkWebSocket(t *testing.T, u *url.URL, kind, proto string, port int32) upgradeResult {
	if kind == kindPortForward {
		q := u.Query()
		q.Set("port", fmt.Sprint(port))
		u.RawQuery = q.Encode()
	}
	res, ws := wsUpgrade(t, u, proto)
	if ws == nil {
		return res
	}
	b64 := strings.Contains(proto, "base64")
	switch {
	case kind == kindPortForward && strings.HasPrefix(proto, "SPDY/3.1+"):
		conn := tunnelConnection(t, ws)
		echo, errs := spdyForward(t, conn, port, 0, "ping "+proto)
		_ = conn.Close()
		mustEqual(t, "echo", echo, "ping "+proto)
		mustEqual(t, "error stream", errs, "")
	case kind == kindPortForward:
		mustEqual(t, "echo", wsDirectForward(t, ws, port, "ping "+proto, b64), "ping "+proto)
	default:
		got := wsFrames(t, ws, b64)
		_ = ws.Close()
		mustEqual(t, "stdout", got[1], wantOutput(kind))
		if strings.HasPrefix(proto, "v4.") || strings.HasPrefix(proto, "v5.") || strings.HasPrefix(proto, "v6.") {
			mustEqual(t, "error channel", got[3], `{"status":"Success"}`)
		} else {
			mustEqual(t, "error channel", got[3], "")
		}
	}
	return res
}

// rawStatus is the HTTP status of one more upgrade attempt on u.
func rawStatus(t *testing.T, u *url.URL, transport, proto string) int {
	if transport == "spdy" {
		res, conn := spdyUpgrade(t, u, proto)
		if conn != nil {
			_ = conn.Close()
		}
		return res.status
	}
	res, ws := wsUpgrade(t, u, proto)
	if ws != nil {
		_ = ws.Close()
	}
	return res.status
}

// namesSupported reports whether a refusal body names at least one
// subprotocol the profile accepts for the endpoint (on any transport).
func namesSupported(body string, profile Profile, kind, transport string) bool {
	want := contract[profile]
	var all []string
	if kind == kindPortForward {
		all = append(slices.Clone(want.pfSPDY), want.pfWS...)
	} else {
		all = append(slices.Clone(want.rcSPDY), want.rcWS...)
	}
	for _, p := range all {
		if strings.Contains(body, p) {
			return true
		}
	}
	return false
}
