# zflux: `make demo` runs a live local cluster, `make test` runs every test.
# Both install what they need first (libzmq3-dev via apt when it is missing).

SWIFT  ?= swift
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ZFLUX  := .build/debug/zflux

.PHONY: all deps test-deps build demo test ha-test lint format bench simulate fuzz expand-macros dist dist-test upgrade-test clean help

all: build

help:
	@echo "make demo   start a local cluster (dispatcher + one store per example app) and watch it live"
	@echo "make test   build and run every test (unit and real-process integration)"
	@echo "make ha-test  the dispatcher pair's tests against a real etcd alone (make test runs them too)"
	@echo "make build  build the zflux binary (.build/debug/zflux)"
	@echo "make bench  release build, then the journal, codec and load measurements of BENCHMARKS.md"
	@echo "make fuzz   fuzz every decoder (libFuzzer) for FUZZ_SECONDS each"
	@echo "make simulate  release build, then SEEDS seeds (default 100000) of the deterministic simulator"
	@echo "make dist   release build (Swift runtime linked in), then dist/zflux-VERSION-linux-ARCH.tar.gz (INSTALL.md inside)"
	@echo "make dist-test  unpack that tarball and run its binary with an empty environment; ldd finds no Swift library"
	@echo "make upgrade-test  build UPGRADE_FROM (a commit or tag) beside the head, upgrade a cluster under load three ways"
	@echo "make expand-macros  write the example apps' @WireCodable conformances again (after changing a marked type)"
	@echo "make lint   check the style (.swift-format) of every Swift file; make format applies it"

# libzmq's header and library, and etcd (leader election, and its tests); installed only when missing.
deps:
	@if ! dpkg -s libzmq3-dev >/dev/null 2>&1; then \
		echo "==> installing libzmq3-dev"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libzmq3-dev >/dev/null; \
	fi
	@if ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then \
		echo "==> installing etcd-server"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null; \
	fi

# The terminal viewer's test drives the real `zflux view` through tmux, and the devtools' test its page
# in headless Chromium (Debian's chromium); the deploy tests run
# systemd-analyze and parse the Kubernetes manifests with PyYAML (Debian's python3-yaml: pip refuses to
# install into Debian's own python3); the multi-host test uses ip netns; the failed-fsync test mounts
# scripts/faultfs.py with FUSE (Debian's fuse3 and python3-pyfuse3, a few seconds to install).
test-deps: deps
	@missing=""; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	command -v fusermount3 >/dev/null 2>&1 || missing="$$missing fuse3"; \
	/usr/bin/python3 -c 'import pyfuse3, trio' >/dev/null 2>&1 || missing="$$missing python3-pyfuse3"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	python3 -c 'import yaml' >/dev/null 2>&1 || missing="$$missing python3-yaml"; \
	if [ -n "$$missing" ]; then \
		echo "==> installing$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build

bench: deps
	$(SWIFT) build -c release
	.build/release/zflux journal bench --records 200000 --batch 64 --catch-up 1000000 --dir .build
	.build/release/zflux journal bench --records 20000 --batch 1 --dir .build
	.build/release/zflux bench codec
	.build/release/zflux bench --rate 10000 --duration 10 --floor --fsync batch --svg .build/bench-ipc-batch.svg --hgrm .build/bench-ipc-batch.hgrm
	.build/release/zflux bench --rate 10000 --duration 10 --floor --fsync none
	.build/release/zflux bench --rate 10000 --duration 10 --floor --fsync batch --transport tcp
	.build/release/zflux bench --rate 10000 --duration 10 --floor --fsync none --transport tcp
	.build/release/zflux bench --rate 5000 --duration 5 --fsync none --state-items 10
	.build/release/zflux bench --rate 5000 --duration 5 --fsync none --state-items 10000
	.build/release/zflux bench --max --floor --fsync batch
	.build/release/zflux bench --rate 100000 --duration 4 --floor --fsync batch
	.build/release/zflux bench --rate 10000 --duration 8 --floor --fsync batch
	.build/release/zflux bench --rate 2000 --duration 8 --floor --fsync none
	.build/release/zflux bench --workload deploy/bench/examples-mix.toml --duration 10 --floor
	.build/release/zflux bench --ha --rate 2000 --duration 8
	# kill -9 of a pair's leader with 10M actions journaled (a release zflux, the debug test that drives it)
	ZFLUX_BIN=$(CURDIR)/.build/release/zflux ZFLUX_FAILOVER_RECORDS=10000000 $(SWIFT) test --no-parallel --filter failoverWithALargeJournal
	scripts/redis-streams.sh --rate 3000 --duration 10 --runs 2

demo: build
	$(ZFLUX) demo $(DEMO_ARGS)

# The toolchain's swift-format, with the committed .swift-format; any finding fails.
FORMATTED := Sources Tests Fuzz Plugins Package.swift
lint:
	$(SWIFT) format lint --strict --recursive $(FORMATTED)

format:
	$(SWIFT) format format --in-place --recursive $(FORMATTED)

# Each stage says when it starts and how long it took (scripts/stage.sh); the summary at the end lists
# every stage's time, the whole run's, any failed test and the slowest suites. The suites and the pair's
# tests both run even when one of them fails, and the summary's exit status says whether all passed.
STAGE := scripts/stage.sh
TEST_LOGS := .build/test-logs
test: test-deps
	@$(STAGE) --begin
	@$(STAGE) lint $(SWIFT) format lint --strict --recursive $(FORMATTED)
	@# The guide's code and API.md's examples are compiled and run as tests; regenerate them when python3
	@# is here (the files are committed), before the build that compiles them.
	@if command -v python3 >/dev/null; then python3 scripts/extract-guide.py && python3 scripts/extract-api.py; fi
	@# Every target, test targets included, so that the two test stages below only run.
	@$(STAGE) build $(SWIFT) build --build-tests
	@# The deterministic simulator: 500 seeds of the whole cluster under faults, on both cores, alone
	@# (make simulate runs 100,000 in a release build).
	@$(STAGE) simulate $(ZFLUX) simulate --seeds 500
	@# …and 500 seeds of the high-availability cluster: a leader, its sync standby and a lease service.
	@$(STAGE) simulate-ha $(ZFLUX) simulate --seeds 500 --ha
	@# …and 300 of each on disks and a network that lie (failed and slow syncs, misdirected writes, a full
	@# disk, a flipped bit, failed sends): a seed of those takes about twice as long, so fewer.
	@$(STAGE) simulate-storage $(ZFLUX) simulate --seeds 300 --storage-faults
	@$(STAGE) simulate-storage-ha $(ZFLUX) simulate --seeds 300 --ha --storage-faults
	@# …and 200 with the dispatcher's syncs pipelined (ZFLUX_SYNC_THREADS=2's two syncs in flight), in
	@# the seeds with fsync batch.
	@$(STAGE) simulate-sync-threads $(ZFLUX) simulate --seeds 200 --sync-threads
	@# The suites, and beside them the dispatcher pair's tests against a real etcd, one at a time. The
	@# pair's leases are timed, so the suites run at a lower priority (nice 10): the pair's processes and
	@# etcd get a core when they wake, and the suites have the rest. Neither builds, so neither needs
	@# SwiftPM's lock on .build (--ignore-lock; without it the second waits for the first). The pair's
	@# tests run in a process group of their own, stopped with the suites on Ctrl-C. The pair's output
	@# goes to its log; the summary names any test that failed in either.
	-@setsid --wait $(STAGE) --log-only $(TEST_LOGS)/ha.log ha-tests $(SWIFT) test --skip-build --ignore-lock --no-parallel --filter '$(HA_TESTS)' & \
		ha=$$!; trap 'kill -TERM -- -$$ha 2>/dev/null' INT TERM; \
		nice -n 10 $(STAGE) --log $(TEST_LOGS)/suites.log suites $(SWIFT) test --skip-build --ignore-lock --skip '$(HA_TESTS)' $(TEST_ARGS); \
		wait $$ha
	@ZFLUX_REQUIRED_STAGES="lint build simulate simulate-ha simulate-storage simulate-storage-ha simulate-sync-threads suites ha-tests" $(STAGE) --summary $(TEST_LOGS)/suites.log $(TEST_LOGS)/ha.log

# The tests of a dispatcher pair and its etcd client (make test runs them beside the suites).
HA_TESTS := LeadershipTests|PairFailoverTests|PairPartitionTests|pairFromConfig|pairLeaderKill|standbyRetains
ha-test: deps
	$(SWIFT) test --no-parallel --filter '$(HA_TESTS)'

# The deterministic simulator for as long as asked: SEEDS seeds from FIRST_SEED (make test runs 500).
SEEDS ?= 100000
FIRST_SEED ?= 1
simulate: deps
	$(SWIFT) build -c release --product zflux
	.build/release/zflux simulate --seeds $(SEEDS) --first-seed $(FIRST_SEED)

# The release tarball and its check (scripts/dist.sh, scripts/dist-test.sh). Not in `make test`: a
# release build takes long; CI runs both after it (.ci/run).
dist: deps
	scripts/dist.sh

dist-test:
	scripts/dist-test.sh

# An older zflux built from git (UPGRADE_FROM, a commit or tag; scripts/upgrade-test.sh names the pin)
# beside the head, then a cluster upgraded from one to the other under load with a schedule pending:
# stores first, the dispatcher first, and a pair member by member. Two builds: not in `make test`;
# each release runs it against the one before (CHANGELOG.md, "What a release is").
upgrade-test: deps
	scripts/upgrade-test.sh

# Fuzz every decoder for longer (FUZZ_SECONDS each).
FUZZ_SECONDS ?= 120
fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

# The example apps' @WireCodable conformances, written out so that the stock binary builds no
# swift-syntax, one file per example source with marked types (Counter.swift → Counter+WireCodable.swift):
# WireCodableExpansionTests writes them from the macro's code, removes a generated file whose source is
# gone or marks no type, then fails on purpose so that the diff is reviewed (run the test again to see it
# pass). The files are emptied first, so that a marked type's change the old conformances no longer
# compile with does not stop the build.
# The test, told to write, writes the files and records a failure on purpose (so that a run with the
# variable set by mistake cannot pass); what says whether it worked is the files afterwards.
EXPANSIONS = Sources/Examples/*+WireCodable.swift
expand-macros:
	for f in $(EXPANSIONS); do [ -e "$$f" ] || continue; printf '// swift-format-ignore-file\n' > "$$f"; done
	-ZFLUX_WRITE_EXPANSIONS=1 $(SWIFT) test --filter WireCodableExpansionTests
	@written=yes; for f in $(EXPANSIONS); do grep -q '^extension' "$$f" || written=no; done; \
	if [ $$written = yes ]; then \
		echo "==> Sources/Examples/*+WireCodable.swift written again (the failure above is the test saying so); changes:"; \
		git status --short -- Sources/Examples; \
		git diff --stat -- Sources/Examples; \
	else \
		git checkout -- 'Sources/Examples/*+WireCodable.swift'; \
		echo "==> the expansion test did not build or run (above): Sources/Examples/*+WireCodable.swift are as they were"; \
		exit 1; \
	fi

clean:
	rm -rf .build .zflux dist
