package streamserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// ownHandler serves the profiles cri-streaming cannot (full, conmon-rs,
// legacy). It negotiates against the profile's column of the protocol
// table, refuses what the profile does not speak, and hands every protocol
// the table says cri-streaming serves to cri-streaming's exported handlers
// (ServeExec, ServeAttach, ServePortForward); only the rows served as v5
// and as the port-forward tunnel, which cri-streaming lacks, are served
// here, on k8s.io/streaming's SPDY and wsstream.
type ownHandler struct {
	srv     *server
	profile Profile
	protos  Protocols
	table   []ProtocolRow // the protocol table when the server was made
}

func newOwnHandler(s *server, p Profile) *ownHandler {
	protos, _ := p.Protocols()
	return &ownHandler{srv: s, profile: p, protos: protos, table: ProtocolTable()}
}

func (h *ownHandler) serve(w http.ResponseWriter, r *http.Request, sess *session) {
	if sess.kind == kindPortForward {
		h.servePortForward(w, r, sess)
		return
	}
	h.serveRemoteCommand(w, r, sess)
}

// ---- negotiation helpers ----

// offeredSPDY is the client's X-Stream-Protocol-Version list.
func offeredSPDY(r *http.Request) []string {
	return splitList(r.Header.Values(httpstream.HeaderProtocolVersion))
}

// offeredWebSocket is the client's Sec-WebSocket-Protocol list, or [""]
// when it offers none (wsstream's convention). Like x/net/websocket and
// gorilla, it reads the first header line only, so that the choice made
// here is the one the upgrader makes.
func offeredWebSocket(r *http.Request) []string {
	l := splitList([]string{r.Header.Get(wsstream.WebSocketProtocolHeader)})
	if len(l) == 0 {
		return []string{noSubprot}
	}
	return l
}

func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// choose is the first protocol the client offers that the server accepts:
// the rule of httpstream.Handshake and of wsstream's handshake.
func choose(offered, accepted []string) (string, bool) {
	for _, o := range offered {
		if slices.Contains(accepted, o) {
			return o, true
		}
	}
	return "", false
}

func refuse(w http.ResponseWriter, format string, args ...any) {
	http.Error(w, "unable to upgrade: "+fmt.Sprintf(format, args...), http.StatusForbidden)
}

// offeredText shows a client's offer in a refusal.
func offeredText(offered []string) string {
	if len(offered) == 1 && offered[0] == noSubprot {
		return "(none offered)"
	}
	return "[" + strings.Join(offered, ", ") + "]"
}

func quoteList(l []string) string {
	if len(l) == 0 {
		return "nothing"
	}
	return strings.Join(l, ", ")
}

// ---- exec and attach ----

func (h *ownHandler) serveRemoteCommand(w http.ResponseWriter, r *http.Request, sess *session) {
	opts := remoteCommandOptions(sess.req)
	if wsstream.IsWebSocketRequest(r) {
		offered := offeredWebSocket(r)
		accepted := h.protos.webSocketChoices(h.protos.RemoteCommandWebSocket)
		chosen, ok := choose(offered, accepted)
		if !ok {
			refuse(w, "requested WebSocket protocol(s) %s are not supported for %s by the %s profile; it supports %s%s",
				offeredText(offered), sess.kind, h.profile, quoteList(h.protos.RemoteCommandWebSocket), spdyHint(h.protos.RemoteCommandSPDY))
			return
		}
		switch served, ok := serverOf(h.table, RemoteCommandWebSocket, chosen); {
		case chosen == noSubprot || ok && served == ServedByLibrary:
			h.serveLibraryRemoteCommand(w, r, sess, opts, nil)
		case ok && served == ServedAsV5:
			h.serveV5WebSocket(w, r, sess, opts, chosen)
		default:
			refuse(w, "WebSocket protocol %q has no server", chosen) // not reached: every row is served
		}
		return
	}

	if len(h.protos.RemoteCommandSPDY) == 0 {
		refuse(w, "the %s profile does not speak SPDY for %s; it accepts WebSocket %s",
			h.profile, sess.kind, quoteList(h.protos.RemoteCommandWebSocket))
		return
	}
	chosen, ok := choose(offeredSPDY(r), h.protos.RemoteCommandSPDY)
	if served, _ := serverOf(h.table, RemoteCommandSPDY, chosen); !ok || served == ServedAsV5 {
		// Handshake writes the 403 (or 400) naming the whole list, or picks
		// a row served as v5.
		if _, err := httpstream.Handshake(r, w, h.protos.RemoteCommandSPDY); err != nil {
			return
		}
		h.serveV5SPDY(w, r, sess, opts)
		return
	}
	// cri-streaming's rows: given only those, it negotiates the same
	// protocol chosen here.
	h.serveLibraryRemoteCommand(w, r, sess, opts, library(h.table, RemoteCommandSPDY, h.protos.RemoteCommandSPDY))
}

func spdyHint(spdy []string) string {
	if len(spdy) == 0 {
		return ""
	}
	return " (and SPDY " + quoteList(spdy) + ")"
}

func remoteCommandOptions(req any) *remotecommandserver.Options {
	switch r := req.(type) {
	case *runtimeapi.ExecRequest:
		return &remotecommandserver.Options{Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, TTY: r.Tty}
	case *runtimeapi.AttachRequest:
		return &remotecommandserver.Options{Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, TTY: r.Tty}
	}
	return &remotecommandserver.Options{}
}

func (h *ownHandler) serveLibraryRemoteCommand(w http.ResponseWriter, r *http.Request, sess *session, opts *remotecommandserver.Options, spdyProtocols []string) {
	if spdyProtocols == nil {
		spdyProtocols = remotecommandserver.SupportedStreamingProtocols // unused for WebSocket
	}
	switch req := sess.req.(type) {
	case *runtimeapi.ExecRequest:
		remotecommandserver.ServeExec(w, r, sessionExecutor{sess}, "", "", req.ContainerId, req.Cmd, opts, h.srv.idle, h.srv.create, spdyProtocols)
	case *runtimeapi.AttachRequest:
		remotecommandserver.ServeAttach(w, r, sessionExecutor{sess}, "", "", req.ContainerId, opts, h.srv.idle, h.srv.create, spdyProtocols)
	}
}

// sessionExecutor adapts the server's Backend to cri-streaming's Executor,
// Attacher and PortForwarder for one session.
type sessionExecutor struct{ sess *session }

func (e sessionExecutor) ExecInContainer(ctx context.Context, _, _ string, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize, _ time.Duration) error {
	return e.sess.srv.exec(ctx, e.sess, container, cmd, in, out, errOut, tty, resize)
}

func (e sessionExecutor) AttachContainer(ctx context.Context, _, _ string, container string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	return e.sess.srv.attach(ctx, e.sess, container, in, out, errOut, tty, resize)
}

// PortForward gets context.Background from cri-streaming; the session's
// context ends the call when the upgrade's handler returns or Stop runs.
func (e sessionExecutor) PortForward(_ context.Context, podID, _ string, port int32, stream io.ReadWriteCloser) error {
	return e.sess.srv.portForward(e.sess.ctx, e.sess, podID, port, stream)
}

// ---- port-forward ----

func (h *ownHandler) servePortForward(w http.ResponseWriter, r *http.Request, sess *session) {
	req := sess.req.(*runtimeapi.PortForwardRequest)
	if wsstream.IsWebSocketRequest(r) {
		offered := offeredWebSocket(r)
		accepted := h.protos.webSocketChoices(h.protos.PortForwardWebSocket)
		chosen, ok := choose(offered, accepted)
		if !ok {
			refuse(w, "requested WebSocket protocol(s) %s are not supported for port-forward by the %s profile; it supports %s%s",
				offeredText(offered), h.profile, quoteList(h.protos.PortForwardWebSocket), spdyHint(h.protos.PortForwardSPDY))
			return
		}
		if served, _ := serverOf(h.table, PortForwardWebSocket, chosen); served == ServedAsTunnel {
			h.serveTunnel(w, r, sess, req)
			return
		}
		// The direct protocol: ports from ?port=N, else from the request.
		opts, err := portforward.NewV4Options(r)
		if err != nil {
			if len(req.Port) == 0 {
				http.Error(w, fmt.Sprintf("unable to upgrade: %v (or set ports in PortForwardRequest)", err), http.StatusBadRequest)
				return
			}
			opts, _ = portforward.BuildV4Options(req.Port)
		}
		portforward.ServePortForward(w, r, sessionExecutor{sess}, req.PodSandboxId, "", opts, h.srv.idle, h.srv.create, h.protos.PortForwardSPDY)
		return
	}
	if len(h.protos.PortForwardSPDY) == 0 {
		refuse(w, "the %s profile does not speak SPDY for port-forward; it accepts WebSocket %s",
			h.profile, quoteList(h.protos.PortForwardWebSocket))
		return
	}
	portforward.ServePortForward(w, r, sessionExecutor{sess}, req.PodSandboxId, "", &portforward.V4Options{}, h.srv.idle, h.srv.create, h.protos.PortForwardSPDY)
}
