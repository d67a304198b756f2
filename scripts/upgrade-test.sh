#!/usr/bin/env bash
# make upgrade-test: an older zflux, built from git beside the head, upgraded to the head under load
# with a schedule pending, as docs/OPERATIONS.md ("Upgrading") says to upgrade a cluster:
#   stores-first      old dispatcher and stores; each store restarted on the new binary, then the dispatcher;
#   dispatcher-first  the other way round;
#   pair              a dispatcher pair (etcd), the standby first, a failover, then the former leader.
# A client dispatches counter.incrementTapped one after another throughout (each waits for its ACK,
# resending through restarts and failovers). In the end: every acknowledged action is in the journal
# once and applied once (the counter equals the journal's count of them), and the login app's
# session schedule, made before the upgrade, fired exactly once after it.
#
# UPGRADE_FROM: the commit or tag to upgrade from (default: the pin below); UPGRADE_SCENARIOS: which
# to run (default: all three). The old tree is a git worktree under .build/upgrade/, built once.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# The pin: the newest commit before the latest changes to a format or the public API (it prints 0.1.0).
# The version's one place (0.2.0), the outbox's held answers, the byEffect flag and the REPLICA-HELLO's
# proof came after it. Once releases are tagged, the previous release's tag takes its place.
FROM=${UPGRADE_FROM:-175b25d}
SCENARIOS=${UPGRADE_SCENARIOS:-stores-first dispatcher-first pair}
SWIFT=${SWIFT:-swift}
say() { echo "upgrade-test: $*"; }
fail() { echo "upgrade-test: FAILED: $*" >&2; exit 1; }

# UPGRADE_OLD_BINARY / UPGRADE_NEW_BINARY: binaries already built, to run the scenarios without building.
if [ -n "${UPGRADE_OLD_BINARY:-}" ]; then
    OLD=$UPGRADE_OLD_BINARY
else
commit=$(git rev-parse --verify "$FROM^{commit}")
old_tree="$root/.build/upgrade/${commit:0:7}"
if [ ! -d "$old_tree" ]; then
    mkdir -p "$root/.build/upgrade"
    git worktree add --detach "$old_tree" "$commit" >/dev/null
fi
# The head's resolved packages and checkouts, so that the old tree builds without fetching.
mkdir -p "$old_tree/.build"
[ -f "$old_tree/Package.resolved" ] || cp Package.resolved "$old_tree/" 2>/dev/null || true
for part in checkouts repositories; do
    [ -e "$old_tree/.build/$part" ] || { [ -e ".build/$part" ] && cp -a ".build/$part" "$old_tree/.build/"; } || true
done
say "building $FROM ($commit) in $old_tree"
(cd "$old_tree" && $SWIFT build --product zflux)
OLD="$old_tree/.build/debug/zflux"
fi
if [ -n "${UPGRADE_NEW_BINARY:-}" ]; then
    NEW=$UPGRADE_NEW_BINARY
else
    say "building the head"
    $SWIFT build --product zflux
    NEW="$root/.build/debug/zflux"
fi
say "old: $("$OLD" --version); new: $("$NEW" --version)"

scratch=$(mktemp -d /tmp/zf-up-XXXXXX)
declare -A PIDS=()
LOADER=""
ETCD=""
cleanup() {
    [ -n "$LOADER" ] && kill -TERM "$LOADER" 2>/dev/null
    for node in "${!PIDS[@]}"; do kill -TERM "${PIDS[$node]}" 2>/dev/null || true; done
    sleep 1
    for node in "${!PIDS[@]}"; do kill -KILL "${PIDS[$node]}" 2>/dev/null || true; done
    [ -n "$ETCD" ] && { kill -TERM "$ETCD" 2>/dev/null; wait "$ETCD" 2>/dev/null || true; }
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $scratch"; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

# waits for a condition: until TIMEOUT_SECONDS WHAT COMMAND...
until_true() {
    local timeout=$1 what=$2
    shift 2
    local deadline=$((SECONDS + timeout))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || fail "$what: not within ${timeout}s (logs in $run)"
        sleep 0.3
    done
}

start() { # BINARY NODE: a dispatcher (its name) or a store (its name)
    local binary=$1 node=$2 role=store
    case "$node" in dispatcher | d1 | d2) role=dispatcher ;; esac
    "$binary" "$role" --config "$config" --node "$node" --run-dir "$run" --log-level notice >>"$run/$node.log" 2>&1 &
    PIDS[$node]=$!
    say "  $node runs $([ "$binary" = "$NEW" ] && echo new || echo old) (pid ${PIDS[$node]})"
}

stop() { # NODE: SIGTERM, and wait until it is gone
    local node=$1 pid=${PIDS[$1]}
    kill -TERM "$pid" 2>/dev/null || true
    local status=0
    wait "$pid" 2>/dev/null || status=$?
    unset "PIDS[$node]"
    # 75: a pair's leader that stepped down, as it does when it is stopped while leading.
    [ "$status" = 0 ] || [ "$status" = 75 ] || [ "$status" = 143 ] || fail "$node exited $status on SIGTERM"
}

client() { "$NEW" "$@" --config "$config" --run-dir "$run"; }
answers() { client status >/dev/null; }

acked_count() { [ -f "$run/acked" ] && wc -l <"$run/acked" || echo 0; }
acked_enough() { [ "$(acked_count)" -ge "$WANT" ]; }
more_acked() { # N: wait until N more dispatches have been acknowledged
    local want=$(($(acked_count) + $1))
    WANT=$want
    until_true 180 "$1 more acknowledged dispatches" acked_enough
}

load() { # dispatches one after another until $run/stop-load exists
    while [ ! -f "$run/stop-load" ]; do
        if seq=$("$NEW" dispatch counter incrementTapped --timeout 60 --config "$config" --run-dir "$run" 2>>"$run/load.err"); then
            echo "$seq" >>"$run/acked"
        else
            echo failed >>"$run/failed"
        fi
    done
}

pending_request() { client schedules --json | sed -n 's/.*"request_seq":\([0-9]*\).*/\1/p'; }
has_pending() { [ -n "$(pending_request)" ]; }
sign_in() { # makes the session's schedule; prints its request's seq
    client dispatch login usernameChanged '{"username":"ada@example.com"}' >/dev/null
    client dispatch login passwordChanged '{"password":"secret1"}' >/dev/null
    client dispatch login loginTapped >/dev/null
    until_true 60 "the session's schedule" has_pending
    pending_request
}

check() { # REQUEST: the end of a scenario
    local request=$1
    touch "$run/stop-load"
    wait "$LOADER" || true
    LOADER=""
    [ ! -f "$run/failed" ] || fail "$(wc -l <"$run/failed") dispatches were not acknowledged: $(tail -3 "$run/load.err")"
    local acked head
    acked=$(acked_count)
    head=$(client dispatch counter incrementTapped)
    acked=$((acked + 1))
    until_true 60 "the counter store at seq $head" sh -c "'$NEW' state counter --config '$config' --run-dir '$run' | grep -q '\"version\":$head,'"
    local count journaled
    count=$(client state counter | sed -n 's/.*"count":\([0-9]*\).*/\1/p')
    journaled=$(client journal dump --journal "$journal" | grep -c '"app":"counter","type":"incrementTapped"')
    say "  $acked acknowledged, $journaled in the journal, counter $count"
    [ "$journaled" = "$acked" ] || fail "$acked acknowledged, but the journal holds $journaled"
    [ "$count" = "$acked" ] || fail "$acked acknowledged, but the counter is $count"
    # The schedule fires a minute after the sign-in, once.
    until_true 150 "the session's schedule to fire" sh -c "'$NEW' schedules --json --config '$config' --run-dir '$run' | grep -q '\"fired\":1,'"
    local fired
    fired=$(client journal dump --journal "$journal" | grep '"type":"sessionExpired"' | grep -c "\"request_seq\":$request")
    [ "$fired" = 1 ] || fail "the schedule of seq $request fired $fired times"
    client state login | grep -q 'your session expired' || fail "login's state: $(client state login)"
    say "  the schedule of seq $request fired once"
}

single_config() {
    run="$scratch/$1"
    mkdir -p "$run"
    config="$run/cluster.toml"
    journal="$run/journal"
    cat >"$config" <<EOF
[cluster]
transport = "ipc"
[journal]
fsync = "batch"
[[store]]
name = "counter"
[[store]]
name = "login"
EOF
}

begin() { # FIRST-BINARY: the cluster on one binary, the load, the schedule
    for node in dispatcher counter login; do start "$1" "$node"; done
    until_true 60 "the cluster to answer" answers
    REQUEST=$(sign_in)
    say "  schedule requested at seq $REQUEST"
    load &
    LOADER=$!
    more_acked 20
}

stores_first() {
    say "stores first, then the dispatcher"
    single_config stores-first
    begin "$OLD"
    for node in counter login dispatcher; do
        stop "$node"
        start "$NEW" "$node"
        until_true 60 "$node to answer" answers
        more_acked 20
    done
    check "$REQUEST"
    for node in counter login dispatcher; do stop "$node"; done
}

dispatcher_first() {
    say "the dispatcher first, then the stores"
    single_config dispatcher-first
    begin "$OLD"
    for node in dispatcher counter login; do
        stop "$node"
        start "$NEW" "$node"
        until_true 60 "$node to answer" answers
        more_acked 20
    done
    check "$REQUEST"
    for node in counter login dispatcher; do stop "$node"; done
}

leader() { client status | sed -n 1p | sed -n 's/.*"name":"\(d[12]\)".*/\1/p'; }
leader_is() { [ "$(leader)" = "$1" ]; }
standby_synced() { client status | sed -n 1p | grep -q '"replication_lag":0' && client status | sed -n 1p | grep -q '"standby_following":true'; }

pair() {
    say "a dispatcher pair, the standby first, a failover, then the former leader"
    command -v etcd >/dev/null || [ -x /usr/bin/etcd ] || fail "the pair needs etcd (make deps installs it)"
    run="$scratch/pair"
    mkdir -p "$run/etcd"
    config="$run/cluster.toml"
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$(command -v etcd || echo /usr/bin/etcd)" --data-dir "$run/etcd" --listen-client-urls "http://127.0.0.1:$port" \
        --advertise-client-urls "http://127.0.0.1:$port" --listen-peer-urls http://127.0.0.1:0 >"$run/etcd.log" 2>&1 &
    ETCD=$!
    cat >"$config" <<EOF
[cluster]
name = "upgrade"
transport = "ipc"
[ha]
etcd = ["http://127.0.0.1:$port"]
lease_ms = 3000
replication = "sync"
[[dispatcher]]
name = "d1"
[[dispatcher]]
name = "d2"
[journal]
fsync = "batch"
[[store]]
name = "counter"
[[store]]
name = "login"
EOF
    start "$OLD" d1
    until_true 60 "d1 to lead" sh -c "'$NEW' status --config '$config' --run-dir '$run' | sed -n 1p | grep -q '\"leader\":true'"
    start "$OLD" d2
    for node in counter login; do start "$OLD" "$node"; done
    until_true 60 "the pair in sync" standby_synced
    REQUEST=$(sign_in)
    say "  schedule requested at seq $REQUEST"
    load &
    LOADER=$!
    more_acked 20
    local first second
    first=$(leader)
    second=$([ "$first" = d1 ] && echo d2 || echo d1)
    # The standby on the new binary, then the former leader's binary before the failover: it steps
    # down, exits, and comes back as a standby of the new release (docs/OPERATIONS.md, "Upgrading").
    stop "$second"
    start "$NEW" "$second"
    until_true 90 "$second to follow" standby_synced
    more_acked 20
    client failover >/dev/null
    stop "$first"
    start "$NEW" "$first"
    until_true 90 "$second to lead" leader_is "$second"
    until_true 90 "$first to follow" standby_synced
    more_acked 20
    for node in counter login; do
        stop "$node"
        start "$NEW" "$node"
        until_true 60 "$node to answer" answers
    done
    more_acked 20
    journal="$run/journal/$second"
    check "$REQUEST"
    for node in counter login d1 d2; do [ -n "${PIDS[$node]:-}" ] && stop "$node"; done
}

for scenario in $SCENARIOS; do
    case "$scenario" in
    stores-first) stores_first ;;
    dispatcher-first) dispatcher_first ;;
    pair) pair ;;
    *) fail "no scenario '$scenario' (stores-first, dispatcher-first, pair)" ;;
    esac
done
say "passed: $SCENARIOS, from $("$OLD" --version) to $("$NEW" --version)"
