#!/usr/bin/env bash
# Fails when a module of Sources/ imports what its layer may not: the dependency graph of
# docs/ARCHITECTURE.md ("Modules"), which points one way; and when a unit-test target imports more than
# the module it tests may. Reads the import lines only; no build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python3 - <<'PY'
import pathlib, re, sys

# Each module: the PGModel modules and the other libraries it may import (the system's own are free).
allowed = {
    "PGModelCore":     ([], []),
    "PGModelSQL":      (["PGModelCore"], []),
    "PGModelIO":       (["PGModelCore"], ["NIOCore", "NIOConcurrencyHelpers", "NIOPosix", "NIOSSL", "NIOTLS"]),
    "PGModelPostgres": (["PGModelCore", "PGModelSQL", "PGModelIO"],
                        ["NIOCore", "NIOConcurrencyHelpers", "NIOPosix", "NIOSSL", "PostgresNIO", "Logging", "Tracing", "Metrics", "CoreMetrics"]),
    "PGModelWire":     (["PGModelCore"], ["NIOCore"]),
    "PGModelClient":   (["PGModelCore", "PGModelWire", "PGModelIO"],
                        ["NIOCore", "NIOConcurrencyHelpers", "NIOPosix", "NIOSSL", "NIOTLS", "Logging", "Tracing", "Instrumentation"]),
    "PGModelServer":   (["PGModelCore", "PGModelSQL", "PGModelIO", "PGModelWire", "PGModelPostgres"],
                        ["NIOCore", "NIOConcurrencyHelpers", "NIOPosix", "NIOSSL", "PostgresNIO", "Logging", "ServiceLifecycle",
                         "Tracing", "Instrumentation", "NIOHTTP1", "Metrics", "CoreMetrics", "Prometheus"]),
    "PGModelMacros":   ([], ["SwiftSyntax", "SwiftSyntaxMacros", "SwiftSyntaxBuilder", "SwiftDiagnostics", "SwiftCompilerPlugin"]),
    "PGModel":         (["PGModelCore", "PGModelIO", "PGModelPostgres", "PGModelClient"],
                        ["NIOCore", "NIOConcurrencyHelpers", "NIOPosix", "Logging", "ServiceLifecycle"]),
    "PGModelTesting":  (["PGModel", "PGModelCore", "PGModelIO", "PGModelPostgres", "PGModelServer"],
                        ["NIOPosix", "PostgresNIO", "Logging", "ServiceLifecycle"]),
    "pgmodel":         (["PGModel", "PGModelCore", "PGModelIO", "PGModelPostgres", "PGModelClient", "PGModelWire", "PGModelServer"],
                        ["NIOPosix", "PostgresNIO", "Logging", "ServiceLifecycle", "ArgumentParser",
                         "NIOCore", "NIOHTTP1", "Metrics", "Prometheus"]),
}
system = {"Foundation", "Dispatch", "Glibc", "Darwin", "Observation", "Synchronization", "_Concurrency"}
pattern = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public |package |internal )?import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)")
problems = []
for directory in sorted(pathlib.Path("Sources").iterdir()):
    if not directory.is_dir():
        continue
    module = directory.name
    if module not in allowed:
        problems.append(f"{module}: a module with no place in the graph (add it to scripts/check-layers.sh and docs/ARCHITECTURE.md)")
        continue
    layers, libraries = allowed[module]
    for path in sorted(directory.rglob("*.swift")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = pattern.match(line)
            if not match:
                continue
            name = match.group(1)
            if name == module or name in system or name in layers or name in libraries:
                continue
            problems.append(f"{path}:{number}: {module} may not import {name}")
# Each unit-test target tests one module: it may import that module and what the module itself may
# import, plus the test tools. The integration tests span the layers and are not checked.
test_tools = {"Testing", "XCTest", "PGModelTestSupport", "NIOEmbedded", "SwiftSyntaxMacrosTestSupport",
              "SwiftSyntaxMacrosGenericTestSupport", "SwiftSyntaxMacroExpansion", "SwiftParser"}
support_allowed = {"PGModelCore", "PGModelWire", "NIOCore", "Testing"}
for directory in sorted(pathlib.Path("Tests").iterdir()):
    if not directory.is_dir() or directory.name == "PGModelIntegrationTests":
        continue
    if directory.name == "PGModelTestSupport":
        module, permitted = None, support_allowed
    elif directory.name == "SwiftDataSnippets":
        # App code as Apple writes it: it sees only what an app imports.
        module, permitted = None, {"PGModel", "Observation"}
    else:
        module = directory.name[:-len("Tests")] if directory.name.endswith("Tests") else directory.name
        if module not in allowed:
            problems.append(f"{directory}: a test target for no module of Sources/")
            continue
        layers, libraries = allowed[module]
        permitted = {module} | set(layers) | set(libraries) | test_tools
    for path in sorted(directory.rglob("*.swift")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = pattern.match(line)
            if not match:
                continue
            name = match.group(1)
            if name in system or name in permitted:
                continue
            problems.append(f"{path}:{number}: {directory.name} may not import {name} (test the module it imports in its own target)")
if problems:
    print("== the module graph is broken:", file=sys.stderr)
    for problem in problems:
        print("   " + problem, file=sys.stderr)
    sys.exit(1)
print(f"== the module graph holds ({len(allowed)} modules, imports point one way; each unit-test target imports its module's layers only)")
PY
