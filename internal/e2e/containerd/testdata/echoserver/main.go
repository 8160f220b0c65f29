// Command echoserver is the port-forward load test's in-pod echo server: it
// accepts TCP connections on the port given as its one argument and writes
// back everything each one sends, closing its write side when the client
// closes its own. The tests build it statically (CGO_ENABLED=0) and mount it
// into a busybox container: busybox's `nc -ll -e cat` (a process per
// connection) resets connections by itself under load, which hides what the
// forward does.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: echoserver PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", ":"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
	fmt.Println("echoserver: listening on", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "echoserver: accept:", err)
			time.Sleep(10 * time.Millisecond) // out of descriptors, say: let connections end
			continue
		}
		go echo(c.(*net.TCPConn))
	}
}

// echo copies what c sends back to it; an error only ends that connection.
func echo(c *net.TCPConn) {
	defer c.Close()
	if _, err := io.Copy(c, c); err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", c.RemoteAddr(), err)
		return
	}
	_ = c.CloseWrite() // the client may already be gone; nothing to do then
}
