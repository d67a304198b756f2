#!/usr/bin/env bash
# make dist-test: checks the tarball `make dist` wrote (or the one given), as a host without Swift
# would meet it. Unpacked into a scratch directory:
# - every file the units, INSTALL and the Containerfile name is in it;
# - `ldd` of the binary names no library of the Swift toolchain (libswiftCore, Foundation, dispatch,
#   the toolchain's ICU...), and none it cannot find;
# - the binary runs with an empty environment (`env -i`): --version, then a real cluster (cluster up,
#   a dispatch acknowledged and applied, cluster down with every node gone).
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "dist-test: $*" >&2; exit 1; }

version=$(sed -n 's/^ *static let zfluxVersion = "\(.*\)"$/\1/p' Sources/ZFluxCLI/RootCommand.swift)
tarball=${1:-dist/zflux-$version-linux-$(uname -m).tar.gz}
[ -f "$tarball" ] || fail "$tarball is missing: run make dist first"
name=$(basename "$tarball" .tar.gz)

scratch=$(mktemp -d /tmp/zf-dist-XXXXXX)
supervisor=""
cleanup() {
    if [ -n "$supervisor" ] && kill -0 "$supervisor" 2>/dev/null; then kill -TERM "$supervisor" 2>/dev/null; wait "$supervisor" 2>/dev/null || true; fi
    rm -rf "$scratch"
}
trap cleanup EXIT
tar -xzf "$tarball" -C "$scratch"
root="$scratch/$name"
bin="$root/bin/zflux"
[ -x "$bin" ] || fail "no bin/zflux in $tarball"

# What the units and INSTALL name, where the tarball puts it (it unpacks under /usr/local).
for unit in "$root"/share/zflux/systemd/*.service; do
    for path in $(sed -n 's|^Documentation=file:///usr/local/||p; s|^ExecStart=/usr/local/\([^ ]*\).*|\1|p' "$unit"); do
        [ -e "$root/$path" ] || fail "$(basename "$unit") names /usr/local/$path, which the tarball does not hold"
    done
done
for path in INSTALL.md share/doc/zflux/OPERATIONS.md share/doc/zflux/UPGRADING.md share/doc/zflux/CHANGELOG.md \
    share/zflux/systemd/zflux.sysusers.conf share/zflux/examples/cluster.example.toml; do
    [ -e "$root/$path" ] || fail "$path is missing from $tarball"
done
if grep -q '@VERSION@\|@NAME@' "$root/INSTALL.md"; then fail "INSTALL.md still has a placeholder"; fi

# The Containerfile copies the tarball and nothing else of the repository's; each path it copies exists.
while read -r source; do
    source=${source//\$\{TARBALL\}/$tarball}
    [ -e "$source" ] || fail "deploy/Containerfile copies $source, which does not exist"
done < <(grep -E '^(COPY|ADD) ' deploy/Containerfile | grep -v -- '--from=' | awk '{print $2}')
[ -x "$root/bin/zflux" ] || fail "the Containerfile's entry point, /usr/local/bin/zflux, is not in the tarball"

# No library of the Swift toolchain, and nothing missing.
libraries=$(ldd "$bin")
echo "$libraries" | sed 's/^/  ldd: /'
if echo "$libraries" | grep -E -i 'not found|libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|libicu.*swift|/usr/share/swift|toolchain' >/dev/null; then
    fail "bin/zflux needs a library of the Swift toolchain (or one that is missing)"
fi

# An empty environment: no PATH, HOME, LANG or LD_LIBRARY_PATH.
printed=$(env -i "$bin" --version)
echo "  env -i zflux --version: $printed"
case "$printed" in "$version (commit "*) ;; *) fail "--version printed '$printed', not '$version (commit …)'" ;; esac

run="$scratch/run"
env -i "$bin" cluster up --run-dir "$run" --log-level notice >"$scratch/up.log" 2>&1 &
supervisor=$!
for _ in $(seq 1 600); do
    grep -q "cluster up in" "$scratch/up.log" 2>/dev/null && break
    kill -0 "$supervisor" 2>/dev/null || { cat "$scratch/up.log" >&2; fail "cluster up ended"; }
    sleep 0.1
done
grep -q "cluster up in" "$scratch/up.log" || { cat "$scratch/up.log" >&2; fail "cluster up did not start within 60 s"; }
seq=$(env -i "$bin" dispatch counter incrementTapped --wait --run-dir "$run")
state=$(env -i "$bin" state counter --run-dir "$run")
echo "  env -i zflux dispatch counter incrementTapped --wait: seq $seq; state counter: $state"
case "$state" in *'"count":1'*) ;; *) fail "the counter's state after one increment is $state" ;; esac
pids=$(cat "$run"/pids/*.pid)
kill -TERM "$supervisor"
status=0
wait "$supervisor" || status=$?
supervisor=""
[ "$status" = 0 ] || { cat "$scratch/up.log" >&2; fail "cluster up exited $status on SIGTERM"; }
for pid in $pids; do
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then fail "node $pid outlived cluster down"; fi
done
# The image, where a container tool runs (a docker client without its daemon does not).
tool=""
for candidate in podman docker; do
    if command -v "$candidate" >/dev/null && "$candidate" info >/dev/null 2>&1; then tool=$candidate; break; fi
done
if [ -n "$tool" ]; then
    "$tool" build -q -f deploy/Containerfile --build-arg TARBALL="$tarball" -t zflux-dist-test . >/dev/null
    imaged=$("$tool" run --rm zflux-dist-test --version)
    [ "$imaged" = "$printed" ] || fail "the image's zflux --version printed '$imaged'"
    echo "  image: $imaged"
else
    echo "  no podman or docker that runs here: the image is not built"
fi
echo "dist-test: $tarball passed"
