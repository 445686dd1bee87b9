#!/usr/bin/env bash
# Builds the libFuzzer harness (Fuzz/, its own package) and runs a campaign over the wire layer and the
# request-to-SQL path, no database needed. docs/FUZZING.md explains the harness and records campaigns.
#   scripts/fuzz.sh [seconds=1800] [extra libFuzzer flags…]
# The working corpus grows in Fuzz/.corpus (not committed), seeded from Tests/PGModelWireTests/FuzzCorpus;
# crashes land in Fuzz/.artifacts. Keep a crash (after fixing it) by copying it into
# Tests/PGModelWireTests/FuzzCorpus/regressions, which the unit tests replay in CI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-1800}"
shift || true
seeds=Tests/PGModelWireTests/FuzzCorpus
(cd Fuzz && swift build -c release --sanitize=fuzzer --product PGModelFuzz)
mkdir -p Fuzz/.corpus Fuzz/.artifacts
# One worker: the harness shares the machine. A trap's backtrace would wait for a debugger; libFuzzer
# prints its own. Lines over 64 KiB add nothing the 256-byte limit mode does not exercise.
SWIFT_BACKTRACE=enable=no exec Fuzz/.build/release/PGModelFuzz \
    -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -dict=Fuzz/json.dict -artifact_prefix=Fuzz/.artifacts/ "$@" \
    Fuzz/.corpus "$seeds/seeds" "$seeds/regressions"
