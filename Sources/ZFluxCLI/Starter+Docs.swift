/// The package's README and cluster config.
extension Starter {
    var clusterConfig: String {
        #"""
        # The \#(name) cluster: a dispatcher and one store of the \#(appName) app, on this machine over ipc (socket
        # files in the run directory: ./.zflux, or --run-dir). Start it with
        #   .build/debug/\#(appName) cluster up --config cluster.toml
        # `.build/debug/\#(appName) cluster check cluster.toml` validates it. Every key, tcp and several hosts
        # included, is described in zflux's docs/reference/config.md (deploy/*.toml in zflux has examples).

        [cluster]
        transport = "ipc"        # or "tcp", with host and base_port
        heartbeat_ms = 200

        [journal]
        fsync = "batch"          # always | batch (group commit) | none

        # The store's name is what `\#(appName) state` and `\#(appName) view` name; app is the app it hosts.
        [[store]]
        name = "\#(appName)"
        app = "\#(appName)"
        environment = "live"     # "mock": the app's mock environment (instant answers, no network)

        """#
    }

    /// How the README says zflux is found, and how to change it.
    var readmeDependency: String {
        if let zfluxPath {
            return #"""
                `Package.swift` takes zflux from the checkout in `\#(printable(zfluxPath))`:

                    .package(name: "zflux", path: \#(swiftStringLiteral(zfluxPath))),

                To build against a released zflux instead, replace that line with the URL and version your team gets
                zflux from:

                    .package(url: "https://zflux.example.invalid/zflux", from: "\#(RootCommand.zfluxVersion)"),
                """#
        }
        return #"""
            `Package.swift` names zflux with a placeholder:

                .package(url: "https://zflux.example.invalid/zflux", from: "\#(RootCommand.zfluxVersion)"),

            Replace the URL and version with where your team gets zflux from (its git remote and a release tag),
            or point at a local checkout:

                .package(name: "zflux", path: "/path/to/zflux"),

            (`zflux new \#(name) --output DIR --zflux-path /path/to/zflux` writes that line for you.)
            """#
    }

    var readme: String {
        #"""
        # \#(name)

        A package built on zflux: the `\#(appName)` app (a tally: votes for options, and a ballot loaded by an
        effect), its terminal screen, its tests and a cluster config. Its binary, `\#(appName)`, is the whole zflux
        command line for this app: `cluster up` runs it again for the dispatcher and for each store.

        zflux runs on Linux and needs libzmq: `apt-get install libzmq3-dev` (Debian, Ubuntu). On a Mac,
        build and run it in a Linux container.

        ## Run

            swift build
            .build/debug/\#(appName) cluster up --config cluster.toml

        (or `swift run \#(appName) cluster up --config cluster.toml`). It stays in the foreground; Ctrl-C stops every
        node. In another terminal, in this directory:

            .build/debug/\#(appName) view \#(appName)
            .build/debug/\#(appName) dispatch \#(appName) loadTapped
            .build/debug/\#(appName) dispatch \#(appName) voteCast '{"option":"tea"}'
            .build/debug/\#(appName) state \#(appName)
            .build/debug/\#(appName) bench --attach --app \#(appName) --action voteCast --payload '{"option":"tea"}' --rate 500 --duration 5

        `view` shows the tally's screen (↑↓ choose, Enter votes, `l` loads the ballot); `dispatch` sends an action
        with its arguments as JSON; `state` prints the store's state; `bench` measures latency and throughput of
        an action on the running cluster. `tail` prints every action as it is sequenced, `apps` lists the
        actions with an example of each, and `--help` shows the rest.

        The cluster keeps its socket files, journal and logs in `./.zflux` (`--run-dir DIR` picks another);
        `cluster up --mock` gives the store the app's mock environment. The stock `zflux` binary reads this
        cluster too (`zflux state \#(appName)`, `zflux dispatch \#(appName) …`): states and actions describe
        themselves on the wire, and the dispatcher judges every payload.

        ## Test

            swift test

        `Tests/\#(testModule)` tells the app's story with zflux's `TestStore` (from `FluxTesting`, which needs
        only `FluxCore`): send an action, receive what its effect sends back, finish. One suite runs the app
        in a real dispatcher and store inside the test process, with `TestCluster` (from `FluxClusterTesting`).

        ## Ship

            make dist

        builds `\#(appName)` for release with the Swift runtime linked in and packs it, with `cluster.toml` and this
        README, into `dist/\#(appName)-VERSION-linux-ARCH.tar.gz` (VERSION from the newest git tag, or `make dist
        VERSION=1.0.0`); `make dist-test` runs the packed binary with an empty environment and checks that it
        needs no Swift library. A host needs only glibc, libstdc++ and libzmq5. The binary is the whole zflux
        command line for this app: install it as `/usr/local/bin/\#(appName)` and run it where zflux's docs run
        the stock `zflux` (its systemd units, with `zflux` in their `ExecStart` replaced by `\#(appName)`; its
        OPERATIONS.md, "Shipping your own binary").

        ## What is where

        - `Sources/\#(appModule)/\#(name).swift`: the app: `State`, `Action`, `Environment` (`live` and `mock`), a
          pure `reducer`, and `app(environment:)`, which lists the actions for `\#(appName) apps`.
        - `Sources/\#(appModule)/\#(screenType).swift`: its screen for `\#(appName) view`.
        - `Sources/\#(appName)/main.swift`: the command line: `ZFluxCLI.main(apps:screens:)` with this package's apps
          and screens. Add an app by adding it to that list.
        - `cluster.toml`: the nodes and their settings.
        - `Makefile`: `make`, `make test`, and `make dist` for a release tarball of the binary.

        ## Where zflux comes from

        \#(readmeDependency)

        """#
    }
}
