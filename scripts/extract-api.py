#!/usr/bin/env python3
"""Writes docs/API.md's Swift examples into Tests/APIDocsTests/APITally.swift, so `make test` compiles and runs them.

Run from the package root after editing the page: python3 scripts/extract-api.py
(`make test` runs it too, so the page and its test never drift apart; scripts/extract-guide.py does
the same for docs/GUIDE.md).

Blocks fenced as plain ```swift are compiled here, together, in the APIDocsTests module, their
imports gathered at the top: they build the page's Tally app, and its @Test functions run as tests.
A ```swift main block is a package's main.swift, top-level code that imports the reader's app module
(TallyApp): it is compiled as the body of a function nobody calls, without that import, since Tally
is in this module. A ```swift declarations block is an excerpt of the package's own declarations
(signatures without bodies), which no compiler takes on its own: APIDeclarationTests checks those
line by line against Sources/ instead, and that every other block is in the file this writes.
"""
import pathlib
import re

APP_MODULE = "TallyApp"
page = pathlib.Path("docs/API.md").read_text()
blocks = re.findall(r"```swift( [a-z]+)?\n(.*?)```", page, re.S)
kinds = {kind.strip() for kind, _ in blocks} - {"", "main", "declarations"}
if kinds:
    raise SystemExit(f"docs/API.md: unknown kind of swift block: {sorted(kinds)}")
compiled = [(kind.strip(), code) for kind, code in blocks if kind.strip() != "declarations"]
imports = sorted(
    {line for _, code in compiled for line in code.splitlines() if line.startswith("import ") and line != f"import {APP_MODULE}"}
)
parts = []
for kind, code in compiled:
    body = "\n".join(line for line in code.splitlines() if not line.startswith("import ")).strip("\n")
    if kind == "main":
        indented = "\n".join("    " + line if line else "" for line in body.splitlines())
        body = (
            f"/// API.md's main.swift (without `import {APP_MODULE}`), compiled as a function's body; never called.\n"
            f"func apiMainSwift() async throws {{\n{indented}\n}}"
        )
    parts.append(body)
out = (
    "// Generated from docs/API.md by scripts/extract-api.py: edit the page, not this file.\n"
    + "\n".join(imports)
    + "\n\n"
    + "\n\n".join(parts)
    + "\n"
)
path = pathlib.Path("Tests/APIDocsTests/APITally.swift")
path.parent.mkdir(exist_ok=True)
if not path.exists() or path.read_text() != out:
    path.write_text(out)
