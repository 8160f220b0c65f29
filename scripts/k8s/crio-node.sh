#!/usr/bin/env bash
# stop|start the second node's CRI-O (scripts/k8s/up.sh), for the tests of a
# node whose runtime goes away during a run: `stop` ends crio (TERM, by the
# PID in its pid file; its conmons and containers live on, as they do when
# CRI-O is restarted on a real node) after saving its command line and
# environment; `start` starts it again with them and waits until it answers.
# The kubelet reports the node NotReady ("container runtime is down") while
# crio is stopped, and Ready again after.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[[ $(id -u) -eq 0 ]] || { log "needs root"; exit 2; }
pidf=$CRIO_DIR/crio.pid
saved=$CRIO_DIR/restart

crio_alive() { [[ -n ${1:-} && "$(cat "/proc/$1/comm" 2>/dev/null)" == crio ]]; }

case ${1:-} in
stop)
  pid=$(cat "$pidf" 2>/dev/null || true)
  crio_alive "$pid" || { log "CRI-O under $CRIO_DIR is not running"; exit 1; }
  mkdir -p "$saved"
  cp "/proc/$pid/cmdline" "$saved/cmdline"
  cp "/proc/$pid/environ" "$saved/environ"
  kill -TERM "$pid"
  for _ in $(seq 1 100); do
    crio_alive "$pid" || { log "CRI-O (pid $pid) stopped"; exit 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  log "CRI-O (pid $pid) killed after 10s"
  ;;
start)
  [[ -f $saved/cmdline && -f $saved/environ ]] || { log "no saved command line under $saved: stop it with this script first"; exit 1; }
  mapfile -d '' cmd <"$saved/cmdline"
  mapfile -d '' envs <"$saved/environ"
  env -i "${envs[@]}" setsid "${cmd[@]}" </dev/null >>"$CRIO_DIR/crio.log" 2>&1 &
  echo $! >"$pidf"
  for _ in $(seq 1 300); do
    "$CRICTL" --runtime-endpoint "unix://$CRIO_DIR/crio.sock" --timeout 2s version >/dev/null 2>&1 && { log "CRI-O answering again (pid $(cat "$pidf"))"; exit 0; }
    crio_alive "$(cat "$pidf")" || { log "CRI-O exited at start; $CRIO_DIR/crio.log:"; tail -n 20 "$CRIO_DIR/crio.log" >&2; exit 1; }
    sleep 0.1
  done
  log "CRI-O did not answer within 30s"
  exit 1
  ;;
*)
  log "usage: $0 stop|start"
  exit 2
  ;;
esac
