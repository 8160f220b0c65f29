#!/usr/bin/env bash
# Stops the TLS harness of tls-up.sh (same variables) and removes the key pair
# tls-up.sh made with openssl.
set -uo pipefail
export CRISP_CTRD_DIR=${CRISP_CTRD_DIR:-/tmp/crisp-ctrd-tls}
bash "$(dirname "$0")/../containerd-down.sh"
rc=$?
if [[ -z ${CRISP_CTRD_TLS_DIR:-} && -d $CRISP_CTRD_DIR.certs ]]; then
  rm -rf "$CRISP_CTRD_DIR.certs"
fi
exit $rc
