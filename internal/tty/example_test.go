package tty_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/crisp-cri/crisp/internal/tty"
)

func ExampleParseDetachKeys() {
	keys, err := tty.ParseDetachKeys("ctrl-p,ctrl-q")
	fmt.Printf("%d %v\n", keys, err)
	keys, err = tty.ParseDetachKeys("")
	fmt.Println(keys == nil, err)
	_, err = tty.ParseDetachKeys("ctrl-p,ctrl-")
	fmt.Println(err != nil)
	// Output:
	// [16 17] <nil>
	// true <nil>
	// true
}

func ExampleNewDetachReader() {
	in := strings.NewReader("ls\r\x10\x10\x11exit\r") // ctrl-p ctrl-p ctrl-q: the first ctrl-p is a key
	detached := false
	r := tty.NewDetachReader(in, []byte{16, 17}, func() { detached = true })
	_ = r.Close() // never fails; the session's owner does this once the session is torn down
	sent, err := io.ReadAll(r)
	fmt.Printf("%q %v %v\n", sent, detached, errors.Is(err, tty.ErrDetached))
	// Output:
	// "ls\r\x10" true true
}
