/// The package's manifest, its executable's entry point and its .gitignore.
extension Starter {
    /// Where zflux comes from: the local checkout, or a placeholder the README tells how to replace.
    var zfluxPackage: (comment: String, package: String) {
        if let zfluxPath {
            return (
                "// zflux from a local checkout (README.md says how to use a released zflux instead).",
                ".package(name: \"zflux\", path: \(swiftStringLiteral(zfluxPath)))"
            )
        }
        return (
            "// A placeholder: replace the URL and version with where your team gets zflux from (README.md).",
            ".package(url: \"https://zflux.example.invalid/zflux\", from: \"\(RootCommand.zfluxVersion)\")"
        )
    }

    var manifest: String {
        #"""
        // swift-tools-version: 6.0
        import PackageDescription

        let package = Package(
            name: "\#(name)",
            platforms: [.macOS(.v15)],
            dependencies: [
                \#(zfluxPackage.comment)
                \#(zfluxPackage.package),
            ],
            targets: [
                // The app and its terminal screen: what the command line and the tests share.
                .target(
                    name: "\#(appModule)",
                    dependencies: [
                        .product(name: "FluxCore", package: "zflux"),
                        .product(name: "FluxWire", package: "zflux"),
                        .product(name: "ViewNode", package: "zflux"),
                    ]),
                // The whole zflux command line for this app: `\#(appName) cluster up`, `\#(appName) view \#(appName)`, …
                // The cluster's supervisor runs this same binary again for each node.
                .executableTarget(
                    name: "\#(appName)",
                    dependencies: [
                        "\#(appModule)",
                        .product(name: "ZFluxCLI", package: "zflux"),
                    ]),
                .testTarget(
                    name: "\#(testModule)",
                    dependencies: [
                        "\#(appModule)",
                        .product(name: "FluxCore", package: "zflux"),
                        .product(name: "FluxTesting", package: "zflux"),
                        .product(name: "FluxClusterTesting", package: "zflux"),
                        .product(name: "ViewNode", package: "zflux"),
                    ]),
            ],
            swiftLanguageModes: [.v6]
        )

        """#
    }

    var main: String {
        #"""
        import \#(appModule)
        import ZFluxCLI

        // Every zflux command, for this binary's apps and screens: the nodes `cluster up` starts run this
        // binary too, so they host the same apps. `cluster up --mock` gives the stores mock environments.
        await ZFluxCLI.main(
            apps: { context in [\#(name).app(environment: context.mock ? .mock : .live)] },
            screens: [\#(screenType).self])

        """#
    }

    var gitignore: String {
        """
        .build/
        .zflux/
        .swiftpm/
        dist/

        """
    }

    /// `text` as a Swift string literal.
    func swiftStringLiteral(_ text: String) -> String {
        var literal = "\""
        for character in text.unicodeScalars {
            switch character {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            case _ where character.value < 0x20 || character.value == 0x7F: literal += Self.escaped(character)
            default: literal.unicodeScalars.append(character)
            }
        }
        return literal + "\""
    }

    /// `text` with every control character written as `\u{XX}`: what a generated file that is not
    /// Swift (the README) shows of a path, so that no raw control character lands in it.
    func printable(_ text: String) -> String {
        var result = ""
        for character in text.unicodeScalars {
            if character.value < 0x20 || character.value == 0x7F {
                result += Self.escaped(character)
            } else {
                result.unicodeScalars.append(character)
            }
        }
        return result
    }

    static func escaped(_ scalar: Unicode.Scalar) -> String {
        "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    }
}
