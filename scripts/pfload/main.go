// Command pfload measures what port-forward does with many concurrent
// connections: each sends SIZE bytes of its own pseudo-random data,
// half-closes and reads the echo back; every connection is counted as
// intact (the echo came back whole, whatever ended the connection after
// it), failed loudly (less came back and the connection ended with an
// error: a reset, a refused dial), cut silently (less came back and the
// connection ended cleanly: a lost byte nobody was told of) or hung (no end
// before the deadline). scripts/pfload.sh (make pf-load) runs it against
// crisp's mock runtime.
//
// Usage:
//
//	pfload echo                  serve an echo on 127.0.0.1; print its port
//	pfload run [flags] HOST:PORT run the load against a forwarded port
//
// run exits 1 when a connection was cut silently or hung, 0 otherwise
// (connections that failed loudly are what WebSocket v4 may do under load).
package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pfload echo | pfload run [-conns N] [-size BYTES] [-timeout D] HOST:PORT")
		os.Exit(2) //nolint:forbidigo // a harness tool's own main: the script reads its exit status
	}
	var err error
	switch os.Args[1] {
	case "echo":
		err = serveEcho()
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q: want echo or run", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pfload:", err)
		os.Exit(1) //nolint:forbidigo // a harness tool's own main: the script reads its exit status
	}
}

// serveEcho echoes every connection on a loopback port (the mock runtime's
// pods share the host's loopback) until killed; it prints the port first.
func serveEcho() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(os.Stdout, l.Addr().(*net.TCPAddr).Port); err != nil {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		go func() {
			defer func() { _ = c.Close() }()
			_, _ = io.Copy(c, c)
			_ = c.(*net.TCPConn).CloseWrite()
		}()
	}
}

// outcome is how one connection ended.
type outcome int

const (
	intact outcome = iota
	loud
	silent
	hung
)

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	conns := fs.Int("conns", 1000, "concurrent connections")
	size := fs.Int64("size", 1<<20, "bytes each connection sends (and expects back)")
	timeout := fs.Duration("timeout", 5*time.Minute, "deadline for every connection")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("run needs the forwarded HOST:PORT")
	}
	addr := fs.Arg(0)
	start := time.Now()
	deadline := start.Add(*timeout)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		counts   [4]int
		examples = map[outcome][]string{}
	)
	gate := make(chan struct{})
	for i := range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate // all at once
			o, detail := echoOnce(addr, uint64(i), *size, deadline)
			mu.Lock()
			defer mu.Unlock()
			counts[o]++
			if o != intact && len(examples[o]) < 5 {
				examples[o] = append(examples[o], detail)
			}
		}()
	}
	close(gate)
	wg.Wait()
	elapsed := time.Since(start)
	_, err := fmt.Fprintf(os.Stdout, "%d concurrent connections x %d KiB via %s: %d intact, %d failed loudly, %d cut silently, %d hung (%.1fs)\n",
		*conns, *size>>10, addr, counts[intact], counts[loud], counts[silent], counts[hung], elapsed.Seconds())
	if err != nil {
		return err
	}
	names := map[outcome]string{loud: "failed loudly", silent: "cut silently", hung: "hung"}
	kinds := make([]int, 0, len(examples))
	for o := range examples {
		kinds = append(kinds, int(o))
	}
	sort.Ints(kinds)
	for _, o := range kinds {
		for _, d := range examples[outcome(o)] {
			_, _ = fmt.Fprintf(os.Stdout, "  %s: %s\n", names[outcome(o)], d)
		}
	}
	if counts[silent] > 0 || counts[hung] > 0 {
		return fmt.Errorf("%d connection(s) cut silently, %d hung", counts[silent], counts[hung])
	}
	return nil
}

// echoOnce sends size bytes from seed's stream, half-closes and reads the
// echo; it says how the connection ended, and why when not intact.
func echoOnce(addr string, seed uint64, size int64, deadline time.Time) (outcome, string) {
	c, err := net.DialTimeout("tcp", addr, time.Until(deadline))
	if err != nil {
		return classify(err, 0, size)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(deadline)
	sent := sha256.New()
	werr := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.MultiWriter(c, sent), io.LimitReader(pattern(seed), size))
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		werr <- err
	}()
	got := sha256.New()
	n, rerr := io.Copy(got, c)
	if err := <-werr; err != nil && rerr == nil {
		rerr = err
	}
	if n == size && bytes.Equal(got.Sum(nil), sent.Sum(nil)) {
		return intact, ""
	}
	if rerr == nil {
		if n == size {
			return silent, fmt.Sprintf("%d bytes came back, but not the ones sent (ended cleanly)", n)
		}
		return silent, fmt.Sprintf("%d of %d bytes, then a clean end", n, size)
	}
	return classify(rerr, n, size)
}

func classify(err error, n, size int64) (outcome, string) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return hung, fmt.Sprintf("%d of %d bytes by the deadline: %v", n, size, err)
	}
	return loud, fmt.Sprintf("%d of %d bytes, then %s", n, size, shorten(err))
}

// shorten drops the addresses from a network error: the examples read alike.
func shorten(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// pattern is the pseudo-random byte stream of a seed.
func pattern(seed uint64) io.Reader {
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(key)
}
