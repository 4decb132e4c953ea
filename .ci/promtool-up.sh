#!/usr/bin/env bash
# promtool (Debian's prometheus package) for tests/server/test_fleet_push.py, which checks the
# budget alerting rules `GET /api/budgets/rules` renders with `promtool check rules` and
# `promtool test rules`. Only the binary is used; no Prometheus server is started.
set -euo pipefail
if ! command -v promtool >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
promtool --version | head -1
