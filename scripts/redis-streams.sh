#!/usr/bin/env bash
# zflux against the same pipeline on Redis Streams, durable, side by side on this machine
# (BENCHMARKS.md, "Against Redis Streams"). Usage:
#
#   scripts/redis-streams.sh [--rate R] [--duration S] [--runs K] [--payload-bytes B]
#
# Each run starts a private redis-server (appendonly yes, appendfsync always: an XADD is answered
# once it is fsynced), a relay that XREADs the stream and PUBLISHes each entry (a store's place), and
# a client that paces XADDs open-loop and subscribes (scripts/redis-streams-peer.c); then
# `zflux bench --rate R --duration S --fsync batch` (its ledger.post actions are about 64 bytes), whose
# ACK also means durable. Runs alternate.
# It prints each run's ACK and end-to-end p50 / p99 in µs, then one JSON line per run.
#
# Installs redis-server and libhiredis-dev (apt) when they are missing, and needs the release build
# (`swift build -c release --product zflux`; `make bench` builds it).
set -euo pipefail
cd "$(dirname "$0")/.."

rate=3000 duration=10 runs=2 payload=64
while [ $# -gt 0 ]; do
    case "$1" in
        --rate) rate="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --payload-bytes) payload="$2"; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "redis-streams.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done

zflux=.build/release/zflux
[ -x "$zflux" ] || { echo "redis-streams.sh: $zflux is missing: run swift build -c release --product zflux" >&2; exit 1; }
if ! command -v redis-server >/dev/null || [ ! -f /usr/include/hiredis/hiredis.h ]; then
    echo "==> installing redis-server and libhiredis-dev"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get install -y -q redis-server libhiredis-dev >/dev/null
fi
peer=.build/redis-streams-peer
cc -O2 -Wall -o "$peer" scripts/redis-streams-peer.c -lhiredis -lpthread

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

count=$((rate * duration))
report() {  # NAME JSON
    python3 -c '
import json, sys
name, d = sys.argv[1], json.loads(sys.argv[2])
ack, e2e = d["ack"], d["e2e"]
print("%14s  ACK p50 %8.0f  p99 %8.0f   e2e p50 %8.0f  p99 %8.0f  (µs)" % (name, ack["p50_us"], ack["p99_us"], e2e["p50_us"], e2e["p99_us"]))
' "$1" "$2"
}
lines=()
for run in $(seq 1 "$runs"); do
    port=$((20000 + RANDOM % 10000))
    dir="$work/redis-$run"; mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync always --save '' \
        --daemonize no >"$dir/redis.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
    "$peer" relay --port "$port" &
    pids+=($!)
    redis_line=$("$peer" client --port "$port" --rate "$rate" --count "$count" --payload-bytes "$payload")
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    report "redis-streams" "$redis_line"
    zflux_line=$("$zflux" bench --rate "$rate" --duration "$duration" --fsync batch --json 2>/dev/null | tail -1)
    report "zflux" "$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(json.dumps({"ack": d["ack"], "e2e": d["e2e"]}))' "$zflux_line")"
    lines+=("$redis_line" "$zflux_line")
done
printf '%s\n' "${lines[@]}"
