package client

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// debugInterceptor writes each unary CRI call's request and response to w
// as crictl's --debug does: one logrus-style line each, named after the
// method ("VersionRequest: version:\"v1\"", "VersionResponse: ..."), and
// the error when the call fails.
func debugInterceptor(w io.Writer) grpc.UnaryClientInterceptor {
	var mu sync.Mutex // lines from concurrent calls stay whole
	line := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = fmt.Fprintf(w, "time=%q level=debug msg=%q\n", time.Now().UTC().Format(time.RFC3339), msg) // debug output is best effort
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		name := method[strings.LastIndex(method, "/")+1:]
		line(name + "Request: " + debugText(req))
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err != nil {
			line(name + " failed: " + err.Error())
			return err
		}
		line(name + "Response: " + debugText(reply))
		return nil
	}
}

// debugText is a message in the protobuf text format on one line.
func debugText(m any) string {
	if pm, ok := m.(proto.Message); ok {
		return prototext.MarshalOptions{}.Format(pm)
	}
	return fmt.Sprint(m)
}
