#!/usr/bin/env bash
# Starts a second containerd harness whose CRI streaming server speaks https
# (enable_tls_streaming = true with an x509_key_pair_streaming key pair made
# here), on its own folder, socket, bridge and /24, so it runs beside the
# plaintext harness of containerd-up.sh:
#   CRISP_CTRD_DIR         default /tmp/crisp-ctrd-tls
#   CRISP_CTRD_BRIDGE      default crisptls0
#   CRISP_CTRD_NET_PREFIX  default 10.213.79
#   CRISP_CTRD_TLS_DIR     a folder with ca.crt, server.crt, server.key (for
#                          127.0.0.1); default: made with openssl in
#                          $CRISP_CTRD_DIR.certs (crisp's e2e suite makes its
#                          own with the mock's certs package instead)
# The env file then has CRISP_CTRD_TLS_CA; use it as crisp --tls-ca. Stop with
# containerd/tls-down.sh (same variables).
set -euo pipefail
export CRISP_CTRD_DIR=${CRISP_CTRD_DIR:-/tmp/crisp-ctrd-tls}
export CRISP_CTRD_BRIDGE=${CRISP_CTRD_BRIDGE:-crisptls0}
export CRISP_CTRD_NET_PREFIX=${CRISP_CTRD_NET_PREFIX:-10.213.79}
here=$(dirname "$0")

if [[ -z ${CRISP_CTRD_TLS_DIR:-} ]]; then
  command -v openssl >/dev/null || { echo "containerd-harness: tls-up.sh needs openssl, or CRISP_CTRD_TLS_DIR with ca.crt, server.crt and server.key" >&2; exit 2; }
  export CRISP_CTRD_TLS_DIR=$CRISP_CTRD_DIR.certs
  if [[ ! -s $CRISP_CTRD_TLS_DIR/server.crt ]]; then
    mkdir -p "$CRISP_CTRD_TLS_DIR"
    chmod 700 "$CRISP_CTRD_TLS_DIR"
    (
      cd "$CRISP_CTRD_TLS_DIR"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
        -keyout ca.key -out ca.crt -subj "/O=crisp/CN=crisp containerd harness CA" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,digitalSignature 2>/dev/null
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout server.key -out server.csr -subj "/O=crisp/CN=crisp containerd streaming server" 2>/dev/null
      printf 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n' >server.ext
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
        -extfile server.ext -out server.crt 2>/dev/null
      rm -f server.csr server.ext ca.srl
    )
  fi
fi
for f in ca.crt server.crt server.key; do
  [[ -s $CRISP_CTRD_TLS_DIR/$f ]] || { echo "containerd-harness: $CRISP_CTRD_TLS_DIR/$f is missing" >&2; exit 2; }
done
exec bash "$here/../containerd-up.sh"
