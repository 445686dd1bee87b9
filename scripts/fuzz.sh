#!/usr/bin/env bash
# Builds the libFuzzer harness (Fuzz/, its own package) and runs a campaign over the wire layer and the
# request-to-SQL path; no database needed. docs/FUZZING.md explains the harness and records campaigns.
#   scripts/fuzz.sh [seconds=1800] [extra libFuzzer flags…]   run a campaign
#   scripts/fuzz.sh --pack                                     minimize the working corpus into
#                                                              Tests/PGModelServerTests/FuzzCorpus/campaign.b64
# The working corpus grows in Fuzz/.corpus (not committed); a new one starts from the seeds, the kept
# regressions and campaign.b64. Crashes land in Fuzz/.artifacts: after fixing one, copy it into
# Tests/PGModelServerTests/FuzzCorpus/regressions, which the unit tests replay in CI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
kept=Tests/PGModelServerTests/FuzzCorpus
fuzzer=Fuzz/.build/release/PGModelFuzz
# A trap's backtrace would wait for a debugger; libFuzzer prints its own.
export SWIFT_BACKTRACE=enable=no
(cd Fuzz && swift build -c release --sanitize=fuzzer --product PGModelFuzz)
mkdir -p Fuzz/.corpus Fuzz/.artifacts

if [ "${1:-}" = "--pack" ]; then
    merged=$(mktemp -d)
    trap 'rm -rf "$merged"' EXIT
    # Keeps the fewest inputs that reach every coverage feature (seeds and regressions among them).
    "$fuzzer" -merge=1 "$merged" "$kept/seeds" "$kept/regressions" Fuzz/.corpus
    : > "$kept/campaign.b64"
    for input in "$merged"/*; do
        base64 -w0 "$input" >> "$kept/campaign.b64"
        echo >> "$kept/campaign.b64"
    done
    echo "campaign.b64: $(wc -l < "$kept/campaign.b64") inputs"
    exit 0
fi

seconds="${1:-1800}"
shift || true
if [ -z "$(ls -A Fuzz/.corpus)" ]; then
    n=0
    while IFS= read -r input; do
        n=$((n + 1))
        printf '%s' "$input" | base64 -d > "Fuzz/.corpus/campaign-$n"
    done < "$kept/campaign.b64"
fi
# One worker: the machine is shared. Lines over 8 KiB add nothing the 256-byte limit mode does not exercise.
exec "$fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -dict=Fuzz/json.dict -artifact_prefix=Fuzz/.artifacts/ "$@" \
    Fuzz/.corpus "$kept/seeds" "$kept/regressions"
