#!/usr/bin/env bash
# make dist: the release tarball, dist/zflux-VERSION-linux-ARCH.tar.gz, laid out as it installs under
# /usr/local (INSTALL says how): the binary built with the Swift runtime linked in (it needs only
# glibc, libstdc++ and libzmq5 on the host), the systemd units and sysusers file, the docs the units
# name, and the example configs. SWIFT_BUILD_FLAGS adds to the build (e.g. --scratch-path DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

# The version's one place (CHANGELOG.md, "What a release is").
version=$(sed -n 's/^ *static let zfluxVersion = "\(.*\)"$/\1/p' Sources/ZFluxCLI/RootCommand.swift)
[ -n "$version" ] || { echo "dist: no zfluxVersion in Sources/ZFluxCLI/RootCommand.swift" >&2; exit 1; }
name="zflux-$version-linux-$(uname -m)"

# shellcheck disable=SC2086
$SWIFT build -c release --static-swift-stdlib --product zflux ${SWIFT_BUILD_FLAGS:-}
# shellcheck disable=SC2086
binary="$($SWIFT build -c release --static-swift-stdlib --product zflux ${SWIFT_BUILD_FLAGS:-} --show-bin-path)/zflux"

stage="dist/$name"
rm -rf "$stage" "dist/$name.tar.gz"
mkdir -p "$stage/bin" "$stage/share/doc/zflux/reference" "$stage/share/zflux/systemd" "$stage/share/zflux/examples"
install -m 0755 "$binary" "$stage/bin/zflux"
# Without the DWARF, which is most of its size; the symbols stay, so a crash's backtrace names functions.
strip --strip-debug "$stage/bin/zflux"
# The docs: the units' Documentation= (OPERATIONS.md) and every page it links to, text only.
install -m 0644 README.md CHANGELOG.md "$stage/share/doc/zflux/"
install -m 0644 docs/*.md "$stage/share/doc/zflux/"
install -m 0644 docs/reference/*.md "$stage/share/doc/zflux/reference/"
install -m 0644 deploy/systemd/*.service deploy/systemd/zflux.sysusers.conf deploy/systemd/etcd.default.example "$stage/share/zflux/systemd/"
install -m 0644 deploy/*.example.toml "$stage/share/zflux/examples/"
install -m 0644 deploy/INSTALL.md "$stage/INSTALL.md"
sed -i "s/@VERSION@/$version/g; s/@NAME@/$name/g" "$stage/INSTALL.md"
./"$stage/bin/zflux" --version > "$stage/share/doc/zflux/VERSION"

# Reproducible enough to compare: sorted names, no owner, the commit's time on every file.
stamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -C dist -czf "dist/$name.tar.gz" "$name"
echo "dist/$name.tar.gz"
