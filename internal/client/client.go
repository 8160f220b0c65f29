package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/input"
)

// maxUnixPath is the longest socket path the kernel accepts (sun_path is
// 108 bytes with its NUL).
const maxUnixPath = 107

// maxMessageSize matches what kubelet and crictl accept from a runtime.
const maxMessageSize = 16 * 1024 * 1024

// Client is a connection to a CRI runtime and its image service.
type Client struct {
	// Endpoint is the runtime endpoint as the user would write it.
	Endpoint string
	// ImageEndpoint is the image service's endpoint (Endpoint unless
	// image-endpoint configures another).
	ImageEndpoint string
	Runtime       runtimeapi.RuntimeServiceClient
	Images        runtimeapi.ImageServiceClient
	// Timeout bounds each call made through Call.
	Timeout time.Duration

	conns []*grpc.ClientConn
}

// Dial connects to the runtime (and image service, when its endpoint
// differs). Connections are lazy: an unreachable socket surfaces at the first
// call, as an error that names the endpoint.
func Dial(settings Settings) (*Client, error) {
	rconn, err := dialEndpoint(settings.RuntimeEndpoint, settings.DebugOut, settings.MaxRetries)
	if err != nil {
		return nil, err
	}
	c := &Client{
		Endpoint:      settings.RuntimeEndpoint,
		ImageEndpoint: settings.RuntimeEndpoint,
		Runtime:       runtimeapi.NewRuntimeServiceClient(rconn),
		Images:        runtimeapi.NewImageServiceClient(rconn),
		Timeout:       settings.RequestTimeout,
		conns:         []*grpc.ClientConn{rconn},
	}
	if settings.ImageEndpoint != "" && settings.ImageEndpoint != settings.RuntimeEndpoint {
		iconn, err := dialEndpoint(settings.ImageEndpoint, settings.DebugOut, settings.MaxRetries)
		if err != nil {
			_ = c.Close() // the dial error is the one to report
			return nil, err
		}
		c.Images = runtimeapi.NewImageServiceClient(iconn)
		c.ImageEndpoint = settings.ImageEndpoint
		c.conns = append(c.conns, iconn)
	}
	return c, nil
}

// Close releases the gRPC connections.
func (c *Client) Close() error {
	var first error
	for _, conn := range c.conns {
		if err := conn.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Call runs one gRPC call under the request timeout and turns transport
// failures into errors that name the endpoint and say what to do.
func (c *Client) Call(ctx context.Context, what string, call func(ctx context.Context) error) error {
	return c.callAt(ctx, c.Endpoint, what, call)
}

// CallImages is Call for the image service, whose errors name the image
// endpoint.
func (c *Client) CallImages(ctx context.Context, what string, call func(ctx context.Context) error) error {
	return c.callAt(ctx, c.imageEndpoint(), what, call)
}

func (c *Client) imageEndpoint() string {
	if c.ImageEndpoint != "" {
		return c.ImageEndpoint
	}
	return c.Endpoint
}

func (c *Client) callAt(ctx context.Context, endpoint, what string, call func(ctx context.Context) error) error {
	callCtx := ctx
	var request time.Time // the request timeout's deadline; zero: none
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		request = time.Now().Add(c.Timeout)
		callCtx, cancel = context.WithDeadline(ctx, request)
		defer cancel()
	}
	if err := call(callCtx); err != nil {
		// The caller's deadline (a command's --timeout) or interrupt ended
		// the call, not --request-timeout: say that, and keep it
		// recognisable (errors.Is context.DeadlineExceeded/Canceled).
		// Whose deadline it was comes from the deadlines (deadline.go).
		if errors.Is(ctx.Err(), context.Canceled) {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		if callerDeadlineEnded(ctx, request, time.Now()) {
			return fmt.Errorf("%s: %w", what, context.DeadlineExceeded)
		}
		return c.describe(endpoint, what, err)
	}
	return nil
}

func (c *Client) describe(endpoint, what string, err error) error {
	switch status.Code(err) {
	case codes.Unavailable:
		msg := dialCause(status.Convert(err).Message())
		hint := "is the runtime running? point crisp at it with -r/--runtime-endpoint or CONTAINER_RUNTIME_ENDPOINT"
		switch {
		case strings.HasSuffix(msg, ", "+notASocket):
			hint = "a runtime endpoint is the runtime's unix socket"
			if endpoint == c.Endpoint {
				hint += ": point crisp at it with -r/--runtime-endpoint or CONTAINER_RUNTIME_ENDPOINT"
			} else {
				hint += ": check IMAGE_SERVICE_ENDPOINT or image-endpoint in the config file"
			}
		case strings.Contains(msg, "permission denied"):
			hint = "crisp needs read and write access to the socket: run it as root (sudo) or as a member of the socket's group"
		case endpoint != c.Endpoint:
			hint = "is the runtime running? check IMAGE_SERVICE_ENDPOINT or image-endpoint in the config file"
		}
		return fmt.Errorf("%s: runtime at %s is unreachable: %s; %s", what, endpoint, msg, hint)
	case codes.DeadlineExceeded:
		return fmt.Errorf("%s: runtime at %s did not answer within %s (raise --request-timeout): %w",
			what, endpoint, c.Timeout, err)
	case codes.Unimplemented:
		return fmt.Errorf("%s: runtime at %s does not implement this call: %s",
			what, endpoint, status.Convert(err).Message())
	}
	if st, ok := status.FromError(err); ok {
		return fmt.Errorf("%s: %s (%s)", what, st.Message(), st.Code())
	}
	return fmt.Errorf("%s: %w", what, err)
}

// dialCause keeps the useful end of gRPC's dial failure text:
// `connection error: desc = "transport: Error while dialing: dial unix
// /x.sock: connect: no such file or directory"` becomes `dial unix /x.sock:
// connect: no such file or directory`.
func dialCause(msg string) string {
	const marker = "Error while dialing: "
	if i := strings.Index(msg, marker); i >= 0 {
		return strings.TrimSuffix(msg[i+len(marker):], `"`)
	}
	return msg
}

// notASocket ends the dial error for a unix endpoint that exists but is not a
// socket; describe recognises it in gRPC's error text.
const notASocket = "not a socket"

// notSocket says what path is when it exists and is not a socket (or a
// symbolic link to one): "a regular file", "a directory", ...; "" otherwise.
func notSocket(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&fs.ModeSocket != 0 {
		return ""
	}
	return input.FileKind(fi.Mode())
}

// dialEndpoint accepts unix:// (or a bare path) and tcp:// endpoints.
func dialEndpoint(endpoint string, debugOut io.Writer, maxRetries int) (*grpc.ClientConn, error) {
	network, addr, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	dialer := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil && network == "unix" {
			if what := notSocket(addr); what != "" {
				// connect(2) says "connection refused" for all of these,
				// which sends the user looking for a stopped runtime.
				return nil, fmt.Errorf("%s is %s, %s", addr, what, notASocket)
			}
		}
		return conn, err
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dialer),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize)),
	}
	if maxRetries != 0 {
		// Outside the debug interceptor: -D shows each attempt.
		opts = append(opts, grpc.WithChainUnaryInterceptor(retryInterceptor(endpoint, maxRetries, debugOut)))
	}
	if debugOut != nil {
		opts = append(opts, grpc.WithChainUnaryInterceptor(debugInterceptor(debugOut)))
	}
	conn, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("runtime endpoint %s: %w", endpoint, err)
	}
	return conn, nil
}

// parseEndpoint splits an endpoint into a network and an address.
func parseEndpoint(endpoint string) (network, addr string, err error) {
	switch {
	case strings.HasPrefix(endpoint, "unix://"):
		addr = strings.TrimPrefix(endpoint, "unix://")
		network = "unix"
	case strings.HasPrefix(endpoint, "tcp://"):
		addr = strings.TrimPrefix(endpoint, "tcp://")
		network = "tcp"
	case strings.HasPrefix(endpoint, "/"):
		addr, network = endpoint, "unix"
	default:
		return "", "", fmt.Errorf("runtime endpoint %q: want unix:///path/to/socket or tcp://host:port", endpoint)
	}
	if addr == "" {
		return "", "", fmt.Errorf("runtime endpoint %q has no address; want unix:///path/to/socket or tcp://host:port", endpoint)
	}
	if strings.ContainsRune(addr, 0) {
		return "", "", fmt.Errorf("runtime endpoint %q contains a NUL byte", endpoint)
	}
	switch network {
	case "unix":
		// sun_path holds 108 bytes including the terminating NUL.
		if len(addr) > maxUnixPath {
			return "", "", fmt.Errorf("runtime endpoint %q: socket path is %d bytes, longer than the %d a unix socket allows; use a shorter path or a symlink to the folder",
				endpoint, len(addr), maxUnixPath)
		}
	case "tcp":
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return "", "", fmt.Errorf("runtime endpoint %q: want tcp://host:port", endpoint)
		}
	}
	return network, addr, nil
}
