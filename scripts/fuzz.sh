#!/usr/bin/env bash
# Builds zflux's decoder fuzzer (libFuzzer, with the address sanitizer) and runs every target for a
# bounded time over its committed corpus: Fuzz/corpus/TARGET. A crash fails the run; its input is
# written to Fuzz/crashes/ and belongs in the target's corpus once fixed, as a regression test.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET... | decoders]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(header message replay journal snapshot action actions view-state view-changes parts session index action-batch ack-batch binary-json wire-reader replica config workload)
# `make test` fuzzes the decoders only (scripts/fuzz.sh 5 decoders): toml++ still aborts on some
# malformed values (issue 37 replaces it), and its sanitized build costs two minutes.
if [ "${targets[*]}" = decoders ]; then
  targets=(header message replay journal snapshot action actions view-state view-changes parts session index action-batch ack-batch binary-json wire-reader replica)
fi
out=.build/fuzz
mkdir -p "$out" Fuzz/crashes
binary="$out/zflux-fuzz"
# The file formats zflux reads from outside, compiled into the fuzzer itself (their modules need sockets).
formats="Sources/Devtools/Session.swift Sources/Devtools/SessionChecks.swift Sources/Dispatcher/SegmentIndex.swift"
# The node cores (REPLICA-* into a standby's and a leader's) need swift-log, from SwiftPM's checkout.
logging=.build/checkouts/swift-log/Sources/Logging
[ -d "$logging" ] || swift package resolve > /dev/null
# The TOML parsers (cluster configs, workload files): TOMLKit and its C++ toml++ from SwiftPM's checkout,
# built with the sanitizers, under cut-down Cluster and Bench modules that hold only the parse.
toml=.build/checkouts/TOMLKit/Sources
[ -d "$toml" ] || swift package resolve > /dev/null
clusterParse="Sources/Cluster/ClusterConfig.swift Sources/Cluster/ClusterConfig+TOML.swift Sources/Cluster/ClusterConfig+Keys.swift Sources/Cluster/TOMLHeaderGuard.swift Sources/Cluster/ClusterError.swift"
benchParse="Sources/Bench/Workload.swift Sources/Bench/Workload+TOML.swift Sources/Bench/PayloadTemplate.swift"
sources="$(find Sources/FluxCore Sources/FluxCores Sources/FluxWire Sources/FluxMacros Sources/Examples Fuzz -name '*.swift' | sort) $formats"
if [ ! -x "$binary" ] || [ -n "$(find $sources -newer "$binary" 2>/dev/null | head -1)" ]; then
  echo "==> building the fuzzer"
  flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -wmo -I "$out")
  # ld.gold warns about sanitizer-internal symbols it cannot export; those warnings are harmless.
  quiet() { "$@" 2>&1 | grep -v "Cannot export local symbol" || true; }
  quiet swiftc "${flags[@]}" -module-name FluxCore -emit-module -emit-module-path "$out/FluxCore.swiftmodule" \
    -c $(find Sources/FluxCore -name '*.swift' | sort) -o "$out/FluxCore.o"
  # The example apps use @WireCodable: SwiftPM builds the macro's plugin (swift-syntax), swiftc loads it.
  echo "==> building the @WireCodable macro (swift build --target FluxMacros)"
  swift build --target FluxMacros > "$out/macro.log" 2>&1 || { tail -20 "$out/macro.log"; exit 1; }
  plugin="$(swift build --show-bin-path)/FluxMacros-tool"
  [ -x "$plugin" ] || { echo "no macro plugin at $plugin"; exit 1; }
  flags+=(-load-plugin-executable "$plugin#FluxMacros")
  quiet swiftc "${flags[@]}" -module-name FluxWire -emit-module -emit-module-path "$out/FluxWire.swiftmodule" \
    -c $(find Sources/FluxWire -name '*.swift' | sort) -o "$out/FluxWire.o"
  quiet swiftc "${flags[@]}" -module-name Examples -emit-module -emit-module-path "$out/Examples.swiftmodule" \
    -c $(find Sources/Examples -name '*.swift' | sort) -o "$out/Examples.o"
  quiet swiftc "${flags[@]}" -package-name swift_log -module-name Logging -emit-module -emit-module-path "$out/Logging.swiftmodule" \
    -c $(find "$logging" -name '*.swift' | sort) -o "$out/Logging.o"
  quiet swiftc "${flags[@]}" -package-name zflux -module-name FluxCores -emit-module -emit-module-path "$out/FluxCores.swiftmodule" \
    -c $(find Sources/FluxCores -name '*.swift' | sort) -o "$out/FluxCores.o"
  rm -f "$binary"
  quiet swiftc "${flags[@]}" -module-name ZFluxFuzz Fuzz/FuzzMain.swift $formats "$out/FluxCore.o" "$out/FluxWire.o" "$out/Examples.o" \
    "$out/Logging.o" "$out/FluxCores.o" -o "$binary"
  [ -x "$binary" ] || { echo "fuzzer build failed"; exit 1; }
fi
# The TOML targets' binary: the one above plus toml++, TOMLKit and the two parsers, built only when asked for.
tomlBinary="$out/zflux-fuzz-toml"
case " ${targets[*]} " in
  *" config "* | *" workload "*)
    if [ ! -x "$tomlBinary" ] || [ -n "$(find $sources $clusterParse $benchParse -newer "$tomlBinary" 2>/dev/null | head -1)" ]; then
      flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -wmo -I "$out" -load-plugin-executable "$(swift build --show-bin-path)/FluxMacros-tool#FluxMacros")
      quiet() { "$@" 2>&1 | grep -v "Cannot export local symbol" || true; }
      echo "==> building toml++ and TOMLKit"
      tomlObjects=()
      for cpp in "$toml"/CTOML/Sources/*.cpp; do
        object="$out/ctoml-$(basename "$cpp" .cpp | tr -c 'A-Za-z0-9\n' '_').o"
        clang++ -std=c++17 -DTOML_EXCEPTIONS=1 -fsanitize=fuzzer-no-link,address -O1 -I "$toml/CTOML/include" -c "$cpp" -o "$object"
        tomlObjects+=("$object")
      done
      tomlFlags=(-Xcc -fmodule-map-file="$toml/CTOML/include/CTOML/module.modulemap")
      # TOMLKit's folders have spaces in their names ("TOML Data Types").
      mapfile -t tomlKit < <(find "$toml/TOMLKit" -name '*.swift' | sort)
      quiet swiftc "${flags[@]}" "${tomlFlags[@]}" -swift-version 5 -suppress-warnings -module-name TOMLKit -emit-module -emit-module-path "$out/TOMLKit.swiftmodule" \
        -c "${tomlKit[@]}" -o "$out/TOMLKit.o"
      quiet swiftc "${flags[@]}" "${tomlFlags[@]}" -package-name zflux -module-name Cluster -emit-module -emit-module-path "$out/Cluster.swiftmodule" \
        -c $clusterParse -o "$out/Cluster.o"
      quiet swiftc "${flags[@]}" "${tomlFlags[@]}" -package-name zflux -module-name Bench -emit-module -emit-module-path "$out/Bench.swiftmodule" \
        -c $benchParse -o "$out/Bench.o"
      rm -f "$tomlBinary"
      quiet swiftc "${flags[@]}" "${tomlFlags[@]}" -D ZFLUX_FUZZ_TOML -module-name ZFluxFuzz Fuzz/FuzzMain.swift $formats "$out/FluxCore.o" \
        "$out/FluxWire.o" "$out/Examples.o" "$out/Logging.o" "$out/FluxCores.o" "$out/TOMLKit.o" "$out/Cluster.o" "$out/Bench.o" \
        "${tomlObjects[@]}" -lstdc++ -o "$tomlBinary"
      [ -x "$tomlBinary" ] || { echo "the TOML fuzzer's build failed"; exit 1; }
    fi ;;
esac
failed=0
for target in "${targets[@]}"; do
  corpus="Fuzz/corpus/$target"
  mkdir -p "$corpus"
  work=$(mktemp -d)
  # TOMLKit leaks what toml++ allocates for each parsed table and key list (~100 bytes a parse; zflux
  # parses a config once): the TOML targets look for crashes and aborts, not leaks.
  extra=() asan="" run="$binary"
  case "$target" in config|workload) extra=(-detect_leaks=0) asan=detect_leaks=0 run="$tomlBinary" ;; esac
  if ASAN_OPTIONS="$asan" ZFLUX_FUZZ_TARGET="$target" "$run" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 "${extra[@]}" \
      -artifact_prefix="Fuzz/crashes/$target-" "$work" "$corpus" > "$out/$target.log" 2>&1; then
    echo "fuzz $target: $(grep -Eo 'Done [0-9]+ runs' "$out/$target.log" | tail -1) in ${seconds}s, no crash"
  else
    echo "fuzz $target: FAILED (see $out/$target.log and Fuzz/crashes/)"; tail -20 "$out/$target.log"; failed=1
  fi
  rm -rf "$work"
done
exit $failed
