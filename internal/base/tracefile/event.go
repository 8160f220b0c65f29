// Package tracefile is the --trace-file format: JSON lines, one event per
// line, written while a streaming session runs (Writer) and read back by
// `crisp trace` (Decode, Summarise, Print). It knows nothing of protocols or
// the CLI: transport fills the events in, cmd/crisp names the file.
package tracefile

import (
	"net/url"
	"strings"
	"time"
)

// Kinds of event.
const (
	KindHandshake = "handshake" // one negotiation attempt (accepted or not)
	KindFrame     = "frame"     // one frame of a session
	KindClose     = "close"     // a side closed the session (or a stream)
	KindOpen      = "open"      // port-forward: a local client's connection was accepted
	KindEnd       = "end"       // port-forward: a forwarded connection ended (how, why, bytes)
)

// How a forwarded connection ended (Event.End), as its local client saw it.
const (
	EndEOF    = "eof"    // the remote side ended and crisp passed a clean end on
	EndReset  = "reset"  // crisp reset the local connection (Reason says why)
	EndError  = "error"  // the connection failed (Error says why; reported on stderr)
	EndClosed = "closed" // the local client went away, or the forward stopped
)

// Directions of a frame.
const (
	DirSend = "send" // from crisp to the runtime
	DirRecv = "recv" // from the runtime to crisp
)

// Streams a frame can belong to.
const (
	StreamStdin  = "stdin"
	StreamStdout = "stdout"
	StreamStderr = "stderr"
	StreamError  = "error"
	StreamResize = "resize"
	StreamClose  = "close"
	StreamData   = "data" // port-forward data
)

// Event is one line of a trace file. Fields that do not apply to a kind are
// omitted from the JSON.
type Event struct {
	// Time is when the event happened (RFC 3339 with nanoseconds).
	Time time.Time `json:"time"`
	// Session numbers the sessions in one file from 1: every exec, attach,
	// port-forward or probe step that opens a session gets its own.
	Session int `json:"session"`
	// Op is what the session does: exec, attach, port-forward, or a probe step.
	Op   string `json:"op,omitempty"`
	Kind string `json:"kind"`

	// Handshake: the streaming URL with its token redacted, what crisp
	// offered and what the server chose, its HTTP status and reason, how
	// long the RPC that made the URL and the upgrade took.
	URL           string   `json:"url,omitempty"`
	Transport     string   `json:"transport,omitempty"`
	Offered       []string `json:"offered,omitempty"`
	Protocol      string   `json:"protocol,omitempty"`
	Status        int      `json:"status,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	RPCMillis     float64  `json:"rpc_ms,omitempty"`
	UpgradeMillis float64  `json:"upgrade_ms,omitempty"`
	Error         string   `json:"error,omitempty"`

	// Frame: direction, stream, size in bytes and the first bytes of the
	// payload (base64 in JSON); Truncated when Data is shorter than Size.
	Dir       string `json:"dir,omitempty"`
	Stream    string `json:"stream,omitempty"`
	Size      int    `json:"size,omitempty"`
	Data      []byte `json:"data,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Port-forward frames: the remote port and the connection's request id.
	Port    int   `json:"port,omitempty"`
	Request int64 `json:"request,omitempty"`
	// Resize frames: the terminal size sent.
	Width  uint16 `json:"width,omitempty"`
	Height uint16 `json:"height,omitempty"`
	// Error-stream frames: the exit code the runtime reported.
	ExitCode *int `json:"exit_code,omitempty"`

	// Close: who ended it ("local" or "remote").
	By string `json:"by,omitempty"`

	// Open: the local client's address. End: how the connection ended
	// (End*), why in Reason (a reset) or Error (a failure), and the bytes
	// crisp passed each way: sent to the remote port, received from it.
	Peer      string `json:"peer,omitempty"`
	End       string `json:"end,omitempty"`
	BytesSent int64  `json:"bytes_sent,omitempty"`
	BytesRecv int64  `json:"bytes_recv,omitempty"`
}

// Redacted is what replaces a secret in a trace.
const Redacted = "REDACTED"

// RedactURL hides a streaming URL's token: every path segment after the
// first (CRI streaming servers put the single-use token there:
// /exec/TOKEN, /attach/TOKEN, /portforward/TOKEN) and every query value
// but the ports.
// A URL that does not parse is redacted whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if raw == "" {
			return ""
		}
		return Redacted
	}
	u.User = nil
	segs := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	for i := 1; i < len(segs); i++ {
		if segs[i] != "" {
			segs[i] = Redacted
		}
	}
	u.Path = "/" + strings.Join(segs, "/")
	u.RawPath = ""
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if k == "port" {
				continue // ports are the trace's subject, not a secret
			}
			for i := range q[k] {
				q[k][i] = Redacted
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// secrets are the parts of raw that RedactURL hides: a message quoting the
// URL must lose them too.
func secrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if raw == "" {
			return nil
		}
		return []string{raw}
	}
	var out []string
	segs := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	for i := 1; i < len(segs); i++ {
		if segs[i] != "" {
			out = append(out, segs[i])
			if esc := url.PathEscape(segs[i]); esc != segs[i] {
				out = append(out, esc)
			}
		}
	}
	for k, vs := range u.Query() {
		if k == "port" {
			continue
		}
		for _, v := range vs {
			if v != "" {
				out = append(out, v, url.QueryEscape(v))
			}
		}
	}
	return out
}

// redactText removes the URL's secrets from a message.
func redactText(text, rawURL string) string {
	for _, s := range secrets(rawURL) {
		if len(s) >= 4 { // a one-letter segment would maul the text; tokens are long
			text = strings.ReplaceAll(text, s, Redacted)
		}
	}
	return text
}
