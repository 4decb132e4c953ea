#!/usr/bin/env bash
# Debian's Chromium for the browser tests (tests/browser/, Playwright drives /usr/bin/chromium;
# no browser is ever downloaded by Playwright). Needs root and apt when it is missing; prints
# how long it took and the browser's version.
set -euo pipefail
started=$(date +%s.%N)
if [ ! -x /usr/bin/chromium ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
version=$(/usr/bin/chromium --headless --no-sandbox --disable-gpu --version 2>/dev/null || true)
done_at=$(date +%s.%N)
awk -v s="$started" -v d="$done_at" -v v="$version" \
    'BEGIN { printf "chromium up: %.1f s (%s)\n", d - s, v }'
