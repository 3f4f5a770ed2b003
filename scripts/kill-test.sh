#!/usr/bin/env bash
# Long variant of the SIGINT test: interrupts `check` (against `serve` and an out-of-process mock)
# at N random moments and lists the objects carrying the run label after each: must be zero.
# Usage: scripts/kill-test.sh [N]   (default 50)
set -euo pipefail
kills="${1:-50}"
cd "$(dirname "$0")/.."
RELIABILITY_KILLS="$kills" cargo test --release --test reliability \
    sigint_at_random_moments_leaves_nothing_behind -- --nocapture
