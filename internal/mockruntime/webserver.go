package mockruntime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// webPage is what the built-in web server answers on every path.
const webPage = `<!DOCTYPE html>
<html><head><title>Welcome to crisp-mock</title></head>
<body><h1>Welcome to crisp-mock</h1><p>The mock runtime's built-in web server.</p></body></html>
`

// webServer is the "process" of a web-server image's container: a static
// HTTP server on 127.0.0.1:PORT (pods share the host loopback). It logs one
// access line per request to the container's output, as nginx does.
type webServer struct {
	srv  *http.Server
	lis  net.Listener
	port int // the loopback port it listens on
	done chan struct{}
}

// WebContainerHeader names the container whose built-in server answered:
// with SO_REUSEPORT several may listen on one port.
const WebContainerHeader = "X-Crisp-Mock-Container"

// startWebServer listens on 127.0.0.1:port for container id, or, when
// movable and the port is held by a program that does not share it (or
// needs privileges the mock lacks), on a free loopback port; serve must then
// run (on a goroutine its caller owns) until stop.
func startWebServer(id string, port int, movable bool, emit func(stream string, p []byte)) (*webServer, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// On a real runtime every pod has its own port 80. Pods of the mock
	// share the host loopback, so web servers of several pods (or of several
	// mocks, as parallel tests start them) share the port with SO_REUSEPORT
	// instead of failing; each answers the same page.
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	lis, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil && movable && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EACCES)) {
		lis, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, fmt.Errorf("the built-in web server cannot listen on %s (%w); another web-server container or a host process holds the port: stop it first", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Server", "crisp-mock")
		w.Header().Set(WebContainerHeader, id)
		_, _ = w.Write([]byte(webPage))
		emit(streamStdout, fmt.Appendf(nil, "%s - - [%s] \"%s %s %s\" 200 %d\n", req.RemoteAddr,
			time.Now().Format("02/Jan/2006:15:04:05 -0700"), req.Method, req.URL.RequestURI(), req.Proto, len(webPage)))
	})
	return &webServer{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		lis:  lis,
		port: lis.Addr().(*net.TCPAddr).Port,
		done: make(chan struct{}),
	}, nil
}

// serve answers requests until stop.
func (w *webServer) serve() {
	defer close(w.done)
	_ = w.srv.Serve(w.lis)
}

// signal stops the server on any terminating signal: it has nothing to
// finish gracefully.
func (w *webServer) signal(syscall.Signal) { _ = w.srv.Close() }
