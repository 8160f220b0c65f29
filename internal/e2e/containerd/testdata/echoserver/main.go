// Command echoserver is the port-forward load test's in-pod echo server: it
// accepts TCP connections on the port given as its one argument and writes
// back everything each one sends, closing its write side when the client
// closes its own. The tests build it statically (CGO_ENABLED=0) and mount it
// into a busybox container: busybox's `nc -ll -e cat` (a process per
// connection) resets connections by itself under load, which hides what the
// forward does.
package main

import (
	"errors"
	"io"
	"log"
	"net"
	"os"
	"time"
)

func main() {
	log.SetPrefix("echoserver: ")
	if err := run(os.Args[1:]); err != nil {
		log.Fatal(err) // the container's end, with the reason in its log
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: echoserver PORT")
	}
	ln, err := net.Listen("tcp", ":"+args[0])
	if err != nil {
		return err
	}
	log.Print("listening on ", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Print("accept: ", err)
			time.Sleep(10 * time.Millisecond) // out of descriptors, say: let connections end
			continue
		}
		go echo(c.(*net.TCPConn))
	}
}

// echo copies what c sends back to it; an error only ends that connection.
func echo(c *net.TCPConn) {
	defer func() { _ = c.Close() }() // nothing is left to report on this connection
	if _, err := io.Copy(c, c); err != nil {
		log.Print(c.RemoteAddr(), ": ", err)
		return
	}
	_ = c.CloseWrite() // the client may already be gone; nothing to do then
}
