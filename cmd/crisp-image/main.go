// Command crisp-image packs a static crisp binary into an OCI image tarball on
// an empty base, offline and reproducibly (the same binary gives the same
// bytes): `make image` runs it. The tarball is an OCI image layout that
// also carries Docker's manifest.json, so `ctr images import`, `docker
// load` and `podman load` all read it. go-containerregistry writes the
// layout, so no OCI JSON is written by hand here.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o Options
	flag.StringVar(&o.Binary, "binary", "bin/crisp-static", "the static crisp binary to pack")
	flag.StringVar(&o.Name, "name", "crisp", "image name (docker.io/library/ is implied, as for docker)")
	flag.StringVar(&o.Tag, "tag", "dev", "image tag: crisp's version")
	flag.StringVar(&o.Arch, "arch", "amd64", "the binary's architecture (GOARCH)")
	flag.StringVar(&o.Out, "o", "bin/crisp-image.tar", "the tarball to write")
	flag.Parse()
	digest, err := Write(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crisp-image:", err)
		os.Exit(1) //nolint:forbidigo // a build tool's own main: make reads its exit status
	}
	fmt.Printf("%s: %s:%s %s\n", o.Out, o.Name, o.Tag, digest) //nolint:forbidigo // a build tool's own main prints to make's log
}
