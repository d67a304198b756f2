#!/usr/bin/env bash
# Builds zflux's decoder fuzzer (libFuzzer, with the address sanitizer) and runs every target for a
# bounded time over its committed corpus: Fuzz/corpus/TARGET. A crash fails the run; its input is
# written to Fuzz/crashes/ and belongs in the target's corpus once fixed, as a regression test.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET... | decoders]
#
# ZFLUX_FUZZ_OPT picks the optimization (default -O, for long runs: `make fuzz`; -Onone builds in a
# third of the time, for a short look). `make test` does not fuzz: its corpus test
# (Tests/FuzzCorpusTests) runs every committed input through the same targets, in the debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"; shift || true
targets=("$@")
# Every target has a corpus directory (the corpus test checks that the two lists agree).
if [ ${#targets[@]} = 0 ] || [ "${targets[*]}" = decoders ]; then
  mapfile -t targets < <(ls Fuzz/corpus)
fi
opt="${ZFLUX_FUZZ_OPT:--O}"
case "$opt" in -O | -Onone | -Osize) ;; *) echo "ZFLUX_FUZZ_OPT must be -O, -Onone or -Osize, not $opt"; exit 2 ;; esac
# One build directory per optimization, so that make test and make fuzz do not rebuild each other's.
out=.build/fuzz${opt#-O}
mkdir -p "$out" Fuzz/crashes
binary="$out/zflux-fuzz"
# The file formats zflux reads from outside, compiled into the fuzzer itself (their modules need sockets).
formats="Sources/Devtools/Session.swift Sources/Devtools/SessionChecks.swift Sources/Journaling/SegmentIndex.swift"
# The node cores (REPLICA-* into a standby's and a leader's) need swift-log, from SwiftPM's checkout.
logging=.build/checkouts/swift-log/Sources/Logging
[ -d "$logging" ] || swift package resolve > /dev/null
# The TOML parsers (cluster configs, workload files): the TOML module, under cut-down Cluster and Bench
# modules that hold only the parse.
clusterParse="Sources/Cluster/ClusterConfig.swift Sources/Cluster/ClusterConfig+TOML.swift Sources/Cluster/ClusterConfig+Keys.swift Sources/Cluster/ClusterError.swift"
benchParse="Sources/Bench/Workload.swift Sources/Bench/Workload+TOML.swift Sources/Bench/PayloadTemplate.swift"
# The targets themselves, shared with the corpus test that `make test` runs.
targetsFile=Tests/FuzzCorpusTests/FuzzTargets.swift
sources="$(find Sources/FluxFormat Sources/FluxProtocol Sources/FluxCore Sources/NodeCores Sources/Examples Sources/TOML Fuzz -name '*.swift' | sort) $targetsFile $formats $clusterParse $benchParse"
if [ ! -x "$binary" ] || [ -n "$(find $sources -newer "$binary" 2>/dev/null | head -1)" ]; then
  echo "==> building the fuzzer"
  flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 "$opt" -wmo -I "$out")
  # ld.gold warns about sanitizer-internal symbols it cannot export; those warnings are harmless.
  quiet() { "$@" 2>&1 | grep -v "Cannot export local symbol" || true; }
  # The format, then the protocol on it, then the model that re-exports both.
  quiet swiftc "${flags[@]}" -package-name zflux -module-name FluxFormat -emit-module -emit-module-path "$out/FluxFormat.swiftmodule" \
    -c $(find Sources/FluxFormat -name '*.swift' | sort) -o "$out/FluxFormat.o"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name FluxProtocol -emit-module -emit-module-path "$out/FluxProtocol.swiftmodule" \
    -c $(find Sources/FluxProtocol -name '*.swift' | sort) -o "$out/FluxProtocol.o"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name FluxCore -emit-module -emit-module-path "$out/FluxCore.swiftmodule" \
    -c $(find Sources/FluxCore -name '*.swift' | sort) -o "$out/FluxCore.o"
  # The example apps: their @WireCodable conformances are written out, so no macro plugin is needed.
  quiet swiftc "${flags[@]}" -module-name Examples -emit-module -emit-module-path "$out/Examples.swiftmodule" \
    -c $(find Sources/Examples -name '*.swift' | sort) -o "$out/Examples.o"
  quiet swiftc "${flags[@]}" -package-name swift_log -module-name Logging -emit-module -emit-module-path "$out/Logging.swiftmodule" \
    -c $(find "$logging" -name '*.swift' | sort) -o "$out/Logging.o"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name NodeCores -emit-module -emit-module-path "$out/NodeCores.swiftmodule" \
    -c $(find Sources/NodeCores -name '*.swift' | sort) -o "$out/NodeCores.o"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name TOML -emit-module -emit-module-path "$out/TOML.swiftmodule" \
    -c $(find Sources/TOML -name '*.swift' | sort) -o "$out/TOML.o"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name Cluster -emit-module -emit-module-path "$out/Cluster.swiftmodule" \
    -c $clusterParse -o "$out/Cluster.o"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name Bench -emit-module -emit-module-path "$out/Bench.swiftmodule" \
    -c $benchParse -o "$out/Bench.o"
  rm -f "$binary"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name ZFluxFuzz Fuzz/FuzzMain.swift $targetsFile $formats "$out/FluxFormat.o" "$out/FluxProtocol.o" "$out/FluxCore.o" "$out/Examples.o" \
    "$out/Logging.o" "$out/NodeCores.o" "$out/TOML.o" "$out/Cluster.o" "$out/Bench.o" -o "$binary"
  [ -x "$binary" ] || { echo "fuzzer build failed"; exit 1; }
fi
failed=0
for target in "${targets[@]}"; do
  corpus="Fuzz/corpus/$target"
  mkdir -p "$corpus"
  work=$(mktemp -d)
  if LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp" ZFLUX_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
      -artifact_prefix="Fuzz/crashes/$target-" "$work" "$corpus" > "$out/$target.log" 2>&1; then
    echo "fuzz $target: $(grep -Eo 'Done [0-9]+ runs' "$out/$target.log" | tail -1) in ${seconds}s, no crash"
  else
    echo "fuzz $target: FAILED (see $out/$target.log and Fuzz/crashes/)"; tail -20 "$out/$target.log"; failed=1
  fi
  rm -rf "$work"
done
exit $failed
