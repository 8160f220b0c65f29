package streamserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// criStreamingHandler is the cri-streaming profile: every upgrade is served
// by k8s.io/cri-streaming's own server, the one containerd and CRI-O embed,
// so its protocol set, negotiation and refusals are theirs exactly.
//
// The mock keeps its own single-use tokens (so that faults can refuse an
// upgrade and still consume the token); for each request it takes a fresh
// token from the cri-streaming server and lets that server serve it.
type criStreamingHandler struct {
	srv *server
	cri streaming.Server

	// cri-streaming calls PortForward without the request's context, so
	// when drop-after must find the session of a forwarded connection, the
	// pod ID handed to cri-streaming names the session instead.
	mangle   bool
	nextID   atomic.Int64
	sessions sync.Map // mangled pod ID -> *session
}

// mangledPrefix starts a pod ID that names a session; no CRI pod ID
// contains a NUL.
const mangledPrefix = "\x00session-"

func newCRIStreamingHandler(s *server) (*criStreamingHandler, error) {
	h := &criStreamingHandler{srv: s, mangle: s.faults.dropAfter >= 0}
	cri, err := streaming.NewServer(streaming.Config{
		Addr: "127.0.0.1:0", // never listened on: the mock serves its handler
		// URLs from this server are internal; only their token is used.
		BaseURL:                         &url.URL{Scheme: "http", Host: "cri-streaming.invalid", Path: "/"},
		StreamIdleTimeout:               s.idle,
		StreamCreationTimeout:           s.create,
		SupportedRemoteCommandProtocols: remotecommandserver.SupportedStreamingProtocols,
		SupportedPortForwardProtocols:   portforward.SupportedProtocols,
	}, criRuntime{h})
	if err != nil {
		return nil, fmt.Errorf("streamserver: cri-streaming server: %w", err)
	}
	h.cri = cri
	return h, nil
}

func (h *criStreamingHandler) serve(w http.ResponseWriter, r *http.Request, sess *session) {
	var (
		u   string
		err error
	)
	switch req := sess.req.(type) {
	case *runtimeapi.ExecRequest:
		var resp *runtimeapi.ExecResponse
		if resp, err = h.cri.GetExec(req); err == nil {
			u = resp.Url
		}
	case *runtimeapi.AttachRequest:
		var resp *runtimeapi.AttachResponse
		if resp, err = h.cri.GetAttach(req); err == nil {
			u = resp.Url
		}
	case *runtimeapi.PortForwardRequest:
		pf := req
		if h.mangle {
			key := fmt.Sprintf("%s%d\x00%s", mangledPrefix, h.nextID.Add(1), req.PodSandboxId)
			h.sessions.Store(key, sess)
			defer h.sessions.Delete(key)
			pf = &runtimeapi.PortForwardRequest{PodSandboxId: key, Port: req.Port}
		}
		var resp *runtimeapi.PortForwardResponse
		if resp, err = h.cri.GetPortForward(pf); err == nil {
			u = resp.Url
		}
	}
	if err != nil {
		_ = streaming.WriteError(err, w)
		return
	}
	parsed, err := url.Parse(u)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + sess.kind + "/" + path.Base(parsed.Path)
	r2.URL.RawPath = ""
	h.cri.ServeHTTP(w, r2)
}

// criRuntime adapts the server's Backend to cri-streaming's Runtime.
type criRuntime struct{ h *criStreamingHandler }

func (a criRuntime) Exec(ctx context.Context, containerID string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	return a.h.srv.exec(ctx, sessionFrom(ctx), containerID, cmd, in, out, errOut, tty, resize)
}

func (a criRuntime) Attach(ctx context.Context, containerID string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	return a.h.srv.attach(ctx, sessionFrom(ctx), containerID, in, out, errOut, tty, resize)
}

// PortForward gets context.Background from cri-streaming; the session's
// context (or the server's life) stands in so that Stop ends the call.
func (a criRuntime) PortForward(_ context.Context, podID string, port int32, stream io.ReadWriteCloser) error {
	var sess *session
	var ctx context.Context
	if strings.HasPrefix(podID, mangledPrefix) {
		if v, ok := a.h.sessions.Load(podID); ok {
			sess = v.(*session)
			ctx = sess.ctx
		}
		_, podID, _ = strings.Cut(strings.TrimPrefix(podID, mangledPrefix), "\x00")
	}
	return a.h.srv.portForward(ctx, sess, podID, port, stream)
}
