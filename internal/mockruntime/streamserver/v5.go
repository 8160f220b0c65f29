package streamserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
	"k8s.io/streaming/pkg/httpstream/wsstream"
	utilexec "k8s.io/utils/exec"
)

// Remote command v5 (v5.channel.k8s.io), which cri-streaming does not
// serve: kubelet's v4 over SPDY (where a stream's half-close already ends
// stdin) and, over WebSocket, v4's channels plus the CLOSE signal (a frame
// on channel 255 naming the channel to close), which wsstream implements
// for the protocol name v5.channel.k8s.io.

// status is the error stream's message: metav1.Status as kubelet and
// cri-streaming write it for v4 and later.
type streamStatus struct {
	Status  string         `json:"status,omitempty"`
	Message string         `json:"message,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Details *statusDetails `json:"details,omitempty"`
	Code    int32          `json:"code,omitempty"`
}

type statusDetails struct {
	Causes []statusCause `json:"causes,omitempty"`
}

type statusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// execStatus is cri-streaming's ServeExec outcome in v4 form.
func execStatus(err error) streamStatus {
	if err == nil {
		return streamStatus{Status: "Success"}
	}
	var exitErr utilexec.ExitError
	if errors.As(err, &exitErr) && exitErr.Exited() {
		return streamStatus{
			Status:  "Failure",
			Reason:  remotecommandserver.NonZeroExitCodeReason,
			Details: &statusDetails{Causes: []statusCause{{Type: remotecommandserver.ExitCodeCauseType, Message: fmt.Sprintf("%d", exitErr.ExitStatus())}}},
			Message: fmt.Sprintf("command terminated with non-zero exit code: %v", exitErr),
		}
	}
	return internalError(fmt.Errorf("error executing command in container: %w", err))
}

// attachStatus is cri-streaming's ServeAttach outcome in v4 form.
func attachStatus(err error) streamStatus {
	if err == nil {
		return streamStatus{Status: "Success"}
	}
	return internalError(fmt.Errorf("error attaching to container: %w", err))
}

func internalError(err error) streamStatus {
	return streamStatus{
		Status:  "Failure",
		Reason:  "InternalError",
		Message: fmt.Sprintf("Internal error occurred: %v", err),
		Code:    http.StatusInternalServerError,
	}
}

// v5Streams are one v5 session's streams, whatever the transport.
type v5Streams struct {
	stdin  io.Reader
	stdout io.WriteCloser
	stderr io.WriteCloser
	errors io.Writer
	resize io.Reader
}

// run calls the backend and writes the outcome to the error stream.
func (h *ownHandler) runV5(ctx context.Context, sess *session, opts *remotecommandserver.Options, st v5Streams) {
	var resize chan remotecommandserver.TerminalSize
	if st.resize != nil {
		resize = make(chan remotecommandserver.TerminalSize)
		if h.srv.track() {
			go func() {
				defer h.srv.wg.Done()
				decodeResizes(ctx, st.resize, resize)
			}()
		} else {
			close(resize)
		}
	}
	var result streamStatus
	switch req := sess.req.(type) {
	case *runtimeapi.ExecRequest:
		result = execStatus(h.srv.exec(ctx, sess, req.ContainerId, req.Cmd, st.stdin, st.stdout, st.stderr, opts.TTY, resize))
	case *runtimeapi.AttachRequest:
		result = attachStatus(h.srv.attach(ctx, sess, req.ContainerId, st.stdin, st.stdout, st.stderr, opts.TTY, resize))
	}
	if st.errors != nil {
		if b, err := json.Marshal(result); err == nil {
			_, _ = st.errors.Write(b)
		}
	}
}

// decodeResizes is cri-streaming's handleResizeEvents: JSON TerminalSize
// values, one after another, until the stream ends.
func decodeResizes(ctx context.Context, r io.Reader, ch chan<- remotecommandserver.TerminalSize) {
	defer close(ch)
	dec := json.NewDecoder(r)
	for {
		var size remotecommandserver.TerminalSize
		if err := dec.Decode(&size); err != nil {
			return
		}
		select {
		case ch <- size:
		case <-ctx.Done():
			return
		}
	}
}

// serveV5SPDY serves v5 over SPDY; the handshake header is already set.
func (h *ownHandler) serveV5SPDY(w http.ResponseWriter, r *http.Request, sess *session, opts *remotecommandserver.Options) {
	ctx := r.Context()
	type received struct {
		stream    httpstream.Stream
		replySent <-chan struct{}
	}
	streams := make(chan received)
	setupDone := make(chan struct{})
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		select {
		case streams <- received{s, replySent}:
			return nil
		case <-setupDone:
			return errors.New("unexpected stream after setup")
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if conn == nil {
		return // the upgrader answered the client
	}
	defer func() { _ = conn.Close() }()
	conn.SetIdleTimeout(h.srv.idle)

	expected := 1 // the error stream
	for _, on := range []bool{opts.Stdin, opts.Stdout, opts.Stderr, opts.TTY} {
		if on {
			expected++
		}
	}
	var st v5Streams
	var replies []<-chan struct{}
	expired := time.NewTimer(h.srv.create)
	defer expired.Stop()
	for len(replies) < expected {
		select {
		case rcv := <-streams:
			switch t := rcv.stream.Headers().Get(remotecommandserver.StreamType); t {
			case remotecommandserver.StreamTypeError:
				st.errors = rcv.stream
			case remotecommandserver.StreamTypeStdin:
				st.stdin = rcv.stream
			case remotecommandserver.StreamTypeStdout:
				st.stdout = rcv.stream
			case remotecommandserver.StreamTypeStderr:
				st.stderr = rcv.stream
			case remotecommandserver.StreamTypeResize:
				st.resize = rcv.stream
			default:
				continue // cri-streaming ignores unknown stream types too
			}
			replies = append(replies, rcv.replySent)
		case <-expired.C:
			close(setupDone)
			return
		case <-conn.CloseChan():
			close(setupDone)
			return
		case <-ctx.Done():
			close(setupDone)
			return
		}
	}
	close(setupDone)
	// Reply frames go out before anything is written on the streams.
	for _, rs := range replies {
		select {
		case <-rs:
		case <-conn.CloseChan():
			return
		}
	}
	h.runV5(ctx, sess, opts, st)
}

// serveV5WebSocket serves v5.channel.k8s.io (or a row served as it, under
// its own name): cri-streaming's channel layout
// (stdin 0, stdout 1, stderr 2, error 3, resize 4) on a wsstream.Conn,
// which closes a channel's reader when the client sends CLOSE for it.
func (h *ownHandler) serveV5WebSocket(w http.ResponseWriter, r *http.Request, sess *session, opts *remotecommandserver.Options, name string) {
	rw := func(on bool, t wsstream.ChannelType) wsstream.ChannelType {
		if on {
			return t
		}
		return wsstream.IgnoreChannel
	}
	channels := []wsstream.ChannelType{
		rw(opts.Stdin, wsstream.ReadChannel),
		rw(opts.Stdout, wsstream.WriteChannel),
		rw(opts.Stderr, wsstream.WriteChannel),
		wsstream.WriteChannel,
		wsstream.ReadChannel,
	}
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		name: {Binary: true, Channels: channels},
	})
	conn.SetIdleTimeout(h.srv.idle)
	_, streams, err := conn.Open(w, r)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	// As cri-streaming: an empty message on the lowest writable channel
	// tells the client the session is established.
	switch {
	case opts.Stdout:
		_, _ = streams[1].Write(nil)
	case opts.Stderr:
		_, _ = streams[2].Write(nil)
	default:
		_, _ = streams[3].Write(nil)
	}
	st := v5Streams{errors: streams[3], resize: streams[4]}
	if opts.Stdin {
		st.stdin = streams[0]
	}
	if opts.Stdout {
		st.stdout = streams[1]
	}
	if opts.Stderr {
		st.stderr = streams[2]
	}
	h.runV5(r.Context(), sess, opts, st)
}
