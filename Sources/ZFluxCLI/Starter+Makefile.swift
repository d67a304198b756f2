/// The package's Makefile: build, test, and `make dist`, the release tarball of the team's own binary,
/// built as zflux's own `make dist` builds the stock one.
extension Starter {
    var makefile: String {
        #"""
        # \#(name): `make` builds, `make test` runs the tests, `make dist` makes the release tarball of the
        # \#(appName) binary (dist/\#(appName)-VERSION-linux-ARCH.tar.gz) and `make dist-test` checks it.
        # Recipes start with '>' instead of a tab (.RECIPEPREFIX, GNU make 3.82 and later).
        .RECIPEPREFIX = >
        SWIFT   ?= swift
        APP     := \#(appName)
        # The release's version: the newest tag (v1.2.0 gives 1.2.0), or VERSION=… on the command line.
        VERSION ?= $(patsubst v%,%,$(shell git describe --tags --abbrev=0 2>/dev/null || echo 0.1.0))
        DIST    := $(APP)-$(VERSION)-linux-$(shell uname -m)
        RELEASE := $(SWIFT) build -c release --static-swift-stdlib --product $(APP)

        .PHONY: build test dist dist-test clean

        build:
        > $(SWIFT) build

        test:
        > $(SWIFT) test

        # The binary with the Swift runtime linked in: a host needs glibc, libstdc++ and libzmq5, no Swift.
        # It is the whole zflux command line for this package's apps: run it wherever zflux's docs run the
        # stock `zflux` (its systemd units, with ExecStart naming /usr/local/bin/$(APP)).
        dist:
        > $(RELEASE)
        > rm -rf dist/$(DIST) dist/$(DIST).tar.gz
        > mkdir -p dist/$(DIST)/bin dist/$(DIST)/share/$(APP)
        > install -m 0755 "$$($(RELEASE) --show-bin-path)/$(APP)" dist/$(DIST)/bin/$(APP)
        > install -m 0644 cluster.toml README.md dist/$(DIST)/share/$(APP)/
        > tar --sort=name --owner=0 --group=0 --numeric-owner -C dist -czf dist/$(DIST).tar.gz $(DIST)
        > @echo dist/$(DIST).tar.gz

        # The tarball's binary with an empty environment, and no library of the Swift toolchain.
        dist-test:
        > rm -rf dist/check && mkdir -p dist/check && tar -xzf dist/$(DIST).tar.gz -C dist/check
        > ! ldd dist/check/$(DIST)/bin/$(APP) | grep -E -i 'not found|libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime'
        > env -i dist/check/$(DIST)/bin/$(APP) --version
        > rm -rf dist/check

        clean:
        > rm -rf .build dist

        """#
    }
}
