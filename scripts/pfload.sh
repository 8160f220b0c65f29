#!/usr/bin/env bash
# make pf-load: many concurrent port-forward connections against crisp's mock
# runtime, each counted as intact, failed loudly, cut silently or hung
# (scripts/pfload/main.go). The default is the red-team figure of issue 25:
# 1000 concurrent 1 MiB echoes over the direct WebSocket protocol
# (v4.channel.k8s.io, what containerd and CRI-O serve: the mock's
# cri-streaming profile), where a connection whose local side has finished
# is closed by crisp once the remote side is quiet; nothing may be cut
# silently. A second line gives crisp's own account from --trace-file (how
# each connection ended, per `crisp trace`) and the failures it reported.
#
# Environment: CRISP (default bin/crisp), CONNS (1000), SIZE (1048576
# bytes), TRANSPORT (websocket; spdy for the comparison), PROFILE
# (cri-streaming), TIMEOUT (5m). No root needed; everything lives in a
# /tmp/crisp-pfload.* directory removed at the end. The machine should be
# quiet: the figures are the point.
set -euo pipefail
cd "$(dirname "$0")/.."
CRISP=${CRISP:-bin/crisp}
CONNS=${CONNS:-1000}
SIZE=${SIZE:-1048576}
TRANSPORT=${TRANSPORT:-websocket}
PROFILE=${PROFILE:-cri-streaming}
TIMEOUT=${TIMEOUT:-5m}

# Each connection holds a socket in the client, two in crisp and two in the
# mock runtime (all of them children of this shell).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (($(ulimit -n) < 4 * CONNS + 100)); then
  echo "pfload: the open-files limit $(ulimit -n) is too low for $CONNS connections (raise ulimit -n)" >&2
  exit 1
fi

dir=$(mktemp -d /tmp/crisp-pfload.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
go build -o "$dir/pfload" ./scripts/pfload

sock="unix://$dir/mock.sock"
"$CRISP" mock-runtime --listen "$sock" --profile "$PROFILE" >"$dir/mock.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S $dir/mock.sock ]] && break; sleep 0.05; done
echo '{"metadata":{"name":"pfload","namespace":"default","uid":"pfload"}}' >"$dir/pod.json"
"$CRISP" --runtime-endpoint "$sock" runp "$dir/pod.json" >/dev/null

"$dir/pfload" echo >"$dir/echo.port" &
pids+=($!)
for _ in $(seq 100); do [[ -s $dir/echo.port ]] && break; sleep 0.05; done
port=$(cat "$dir/echo.port")

"$CRISP" --runtime-endpoint "$sock" -v port-forward --address 127.0.0.1 --transport "$TRANSPORT" \
  --trace-file "$dir/trace.jsonl" --trace-bytes 0 pfload ":$port" >"$dir/pf.out" 2>"$dir/pf.err" &
pf=$!
pids+=("$pf")
local_port=
for _ in $(seq 200); do
  local_port=$(sed -n 's/^Forwarding from 127\.0\.0\.1:\([0-9]*\) -> .*/\1/p' "$dir/pf.out")
  [[ -n $local_port ]] && break
  sleep 0.05
done
if [[ -z $local_port ]]; then
  echo "pfload: crisp port-forward did not start:" >&2
  cat "$dir/pf.err" >&2
  exit 1
fi
sed -n 's/^crisp: port-forward: negotiated \(.*\) at .*/protocol: \1/p' "$dir/pf.err" | head -n 1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

status=0
"$dir/pfload" run -conns "$CONNS" -size "$SIZE" -timeout "$TIMEOUT" "127.0.0.1:$local_port" || status=$?

kill -INT "$pf"
wait "$pf" || true
reported=$(grep -c ': connection [0-9]* failed: ' "$dir/pf.err" || true)
ends=$("$CRISP" trace "$dir/trace.jsonl" | sed -n 's/^  connections *//p' | head -n 1)
echo "crisp: $ends; $reported failure(s) reported on stderr"
# The reports by kind, addresses and ports left out.
grep ': connection [0-9]* failed: ' "$dir/pf.err" | sed -e 's/.*: connection [0-9]* failed: //' \
  -e 's/[0-9.]*:[0-9][0-9]*/ADDR/g' -e 's/port [0-9][0-9]*/port N/g' -e 's/[0-9][0-9]* bytes/N bytes/g' |
  cut -c1-200 | sort | uniq -c | sort -rn | head -n 5 || true
exit "$status"
