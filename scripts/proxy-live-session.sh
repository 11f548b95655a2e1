#!/usr/bin/env bash
# A live session of 120 tool calls (default; --calls N) run twice by real Claude Code
# (scripts/install-host.sh) against the scripted model on 127.0.0.1: directly, and
# through `snip wrap claude` (default settings, a temporary store). Prints the
# estimated input cost of both with Anthropic's prompt-cache prices, cumulated every 10
# requests (docs/proxy.md, "Cache behaviour and cost"), and writes the per-request
# figures to target/proxy-live-session.csv. Several minutes; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE="$(scripts/install-host.sh claude-code)"
cargo build --quiet -p snip-cli
exec python3 scripts/proxy_live_session.py --claude "$CLAUDE" --snip "$PWD/target/debug/snip" "$@"
