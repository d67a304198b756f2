#!/usr/bin/env python3
"""Writes docs/GUIDE.md's Swift code into Tests/ExamplesTests/GuideTimer.swift, so `make test` compiles and runs it.

Run from the package root after editing the guide: python3 scripts/extract-guide.py
(`make test` runs it too, so the guide and its test never drift apart).

Blocks fenced as plain ```swift are compiled here, together, in the ExamplesTests module. Two kinds
of Swift block cannot be, and are compiled by StarterTests (Tests/IntegrationTests) instead:
```swift main (a package's main.swift, top-level code that imports the package's app module: the
test checks that `zflux new Timer` writes exactly it, then builds the package) and ```swift manifest
(a Package.swift: the test has SwiftPM evaluate it). StarterTests also builds §6's package from this
guide's blocks, as the guide tells a reader to.
"""
import re, pathlib
guide = pathlib.Path("docs/GUIDE.md").read_text()
blocks = re.findall(r"```swift\n(.*?)```", guide, re.S)
imports = sorted({line for b in blocks for line in b.splitlines() if line.startswith("import ")} | {"import Examples"})
body = "\n".join("\n".join(l for l in b.splitlines() if not l.startswith("import ")) for b in blocks)
out = "// Generated from docs/GUIDE.md by scripts/extract-guide.py: edit the guide, not this file.\n" \
      + "\n".join(imports) + "\n" + body.rstrip("\n") + "\n"
path = pathlib.Path("Tests/ExamplesTests/GuideTimer.swift")
if not path.exists() or path.read_text() != out:
    path.write_text(out)
