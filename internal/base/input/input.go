// Package input reads what a user names on the command line — config files,
// reports, traces, a password on stdin — so that no input can hold crisp
// past a signal or grow it without bound: every read has a size limit, and
// every wait for data (a FIFO with no writer, a terminal, a slow pipe) ends
// when the command's context does. It knows nothing of what it reads.
package input

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
)

// MaxConfig bounds a crictl-style config file (pod and container configs):
// they are kilobytes; a few MiB leaves room for huge annotations.
const MaxConfig = 4 << 20

// MaxLine bounds a line read from stdin, such as a registry password.
const MaxLine = 64 << 10

// TooLargeError is a file or line past its limit.
type TooLargeError struct {
	Name  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most crisp reads of it (is it the right file?)", e.Name, size(e.Limit))
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file at path, at most limit bytes (more is a
// *TooLargeError). A FIFO or device is read like a file; a wait for its data
// ends with ctx's cause when ctx ends.
func ReadFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	var data []byte
	err := interruptible(ctx, func(<-chan struct{}) error {
		f, err := Open(ctx, path)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }() // read-only: nothing to flush
		data, err = io.ReadAll(io.LimitReader(f, limit+1))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if int64(len(data)) > limit {
			return &TooLargeError{Name: path, Limit: limit}
		}
		return nil
	})
	if err != nil {
		// Not data: when ctx ended, the read may still be writing it.
		return nil, err
	}
	return data, nil
}

// ReadLine reads one line of r without its line ending, at most limit bytes
// (more is a *TooLargeError naming name); the end of r ends the line. A wait
// for r ends with ctx's cause when ctx ends.
func ReadLine(ctx context.Context, r io.Reader, name string, limit int) (string, error) {
	var line []byte
	err := interruptible(ctx, func(<-chan struct{}) error {
		br := bufio.NewReader(io.LimitReader(r, int64(limit)+2))
		for {
			b, err := br.ReadByte()
			switch {
			case errors.Is(err, io.EOF):
				return nil
			case err != nil:
				return err
			case b == '\n':
				return nil
			}
			if line = append(line, b); len(line) > limit+1 || (len(line) == limit+1 && b != '\r') {
				return &TooLargeError{Name: name, Limit: int64(limit)}
			}
		}
	})
	if err != nil {
		return "", err
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return string(line), nil
}

// interruptible runs read on a goroutine of its own and returns its error,
// or ctx's cause as soon as ctx ends (stop is closed then). A read blocked
// where nothing can wake it (open(2) of a FIFO nobody writes, a blocking
// stdin) is left behind: the command returns and the process exits with it.
func interruptible(ctx context.Context, read func(stop <-chan struct{}) error) error {
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- read(stop) }()
	select {
	case err := <-done:
		close(stop)
		return err
	case <-ctx.Done():
		close(stop)
		return context.Cause(ctx)
	}
}
