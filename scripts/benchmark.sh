#!/usr/bin/env bash
# Builds Benchmarks/ in release mode and runs it against the embedded cluster (or DATABASE_URL).
#   scripts/benchmark.sh [--quick]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
pgm_setup
cd Benchmarks
swift build -c release
.build/release/PGModelBenchmarks "$@"
