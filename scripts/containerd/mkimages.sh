#!/usr/bin/env bash
# Builds, offline, one OCI image-layout tar holding the harness's images:
#   busybox (Debian's busybox-static + applet links, Cmd sh), also tagged as
#   critest's busybox; httpd (same layer, Cmd busybox httpd on port 80), also
#   tagged as critest's nginx web server; hostnet-httpd (same layer, httpd on
#   port 12003, critest's host-network web server); pause (a static C program).
# Each image: one uncompressed layer, a config, a manifest, and an index entry
# carrying the io.containerd.image.name annotation that `ctr images import` uses.
# Usage: mkimages.sh OUT.tar
set -euo pipefail
. "$(dirname "$0")/lib.sh"
out=${1:?usage: mkimages.sh OUT.tar}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lay=$work/layout
mkdir -p "$lay/blobs/sha256"
arch=$ARCH

# blob FILE: stores FILE as a blob and prints "sha256:HEX SIZE".
blob() {
  local hex size
  hex=$(sha256sum "$1" | cut -d' ' -f1)
  size=$(stat -c %s "$1")
  cp "$1" "$lay/blobs/sha256/$hex"
  echo "sha256:$hex $size"
}
# layer DIR: a reproducible tar of DIR as a blob.
layer() {
  tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 \
    -C "$1" -cf "$work/layer.tar" .
  blob "$work/layer.tar"
}
# image LAYER(digest size) CONFIG-JSON-PART: prints the manifest "digest size".
image() {
  local ldig=$1 lsize=$2 cfg=$3 cdig csize
  cat >"$work/config.json" <<JSON
{"architecture":"$arch","os":"linux","config":$cfg,"rootfs":{"type":"layers","diff_ids":["$ldig"]}}
JSON
  read -r cdig csize < <(blob "$work/config.json")
  cat >"$work/manifest.json" <<JSON
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"$cdig","size":$csize},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"$ldig","size":$lsize}]}
JSON
  blob "$work/manifest.json"
}
entries=()
# entry MANIFEST-DIGEST SIZE NAME: an index entry naming the image.
entry() {
  entries+=("{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"$1\",\"size\":$2,\"platform\":{\"architecture\":\"$arch\",\"os\":\"linux\"},\"annotations\":{\"io.containerd.image.name\":\"$3\"}}")
}

# busybox rootfs
bb=$work/busybox
mkdir -p "$bb"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,root,home,var/www,var/run,tmp}
chmod 1777 "$bb/tmp"
cp /bin/busybox "$bb/bin/busybox"
for p in $(/bin/busybox --list-full); do
  [[ "$p" == bin/busybox ]] && continue
  mkdir -p "$bb/$(dirname "$p")"
  ln -sf /bin/busybox "$bb/$p"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$bb/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$bb/etc/group"
printf 'hosts: files dns\n' >"$bb/etc/nsswitch.conf"
printf '<html><body>crisp busybox httpd</body></html>\n' >"$bb/var/www/index.html"
read -r ldig lsize < <(layer "$bb")
env='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"WorkingDir":"/"'
read -r mdig msize < <(image "$ldig" "$lsize" "{$env,\"Cmd\":[\"sh\"]}")
entry "$mdig" "$msize" "$BUSYBOX_IMAGE"
entry "$mdig" "$msize" "$CRITEST_BUSYBOX_IMAGE"
read -r mdig msize < <(image "$ldig" "$lsize" \
  "{$env,\"Cmd\":[\"httpd\",\"-f\",\"-p\",\"80\",\"-h\",\"/var/www\"],\"ExposedPorts\":{\"80/tcp\":{}}}")
entry "$mdig" "$msize" "$HTTPD_IMAGE"
entry "$mdig" "$msize" "$CRITEST_WEBSERVER_IMAGE"
read -r mdig msize < <(image "$ldig" "$lsize" \
  "{$env,\"Cmd\":[\"httpd\",\"-f\",\"-p\",\"12003\",\"-h\",\"/var/www\"],\"ExposedPorts\":{\"12003/tcp\":{}}}")
entry "$mdig" "$msize" "$CRITEST_HOSTNET_WEBSERVER_IMAGE"

# pause rootfs
pr=$work/pause
mkdir -p "$pr"
gcc -Os -static -o "$pr/pause" "$(dirname "$0")/pause.c"
strip "$pr/pause" 2>/dev/null || true
read -r ldig lsize < <(layer "$pr")
read -r mdig msize < <(image "$ldig" "$lsize" '{"Entrypoint":["/pause"],"WorkingDir":"/"}')
entry "$mdig" "$msize" "$PAUSE_IMAGE"

echo '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
(IFS=,; echo "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\"manifests\":[${entries[*]}]}") >"$lay/index.json"
tar --numeric-owner --owner=0 --group=0 -C "$lay" -cf "$out" oci-layout index.json blobs
