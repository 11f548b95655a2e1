#!/usr/bin/env bash
# Tests snip's Hermes Agent plugin against real Hermes.
#
# 1. Creates (or reuses) the venv .venv-hermes/ with hermes-agent==$HERMES_VERSION
#    from PyPI, pytest, pytest-xdist and maturin.
# 2. Builds snip's wheel from python/ (maturin, release profile) and installs it into
#    the venv, only when the sources changed since the last install.
# 3. Builds the `snip` CLI (debug; a test runs `snip restore` through Hermes's terminal
#    tool) and runs tests/hermes/ with pytest; the tests make fresh HERMES_HOMEs and
#    install and enable the plugin with Hermes's own CLI. The last line is pytest's
#    summary.
#
# Usage: scripts/test-hermes.sh [pytest args...]
#        scripts/test-hermes.sh --install-only   step 1 alone (scripts/test.sh runs it
#                                                early, beside the compile steps)
# Environment: SNIP_HERMES_VENV (venv path), HERMES_VERSION (default 0.19.0),
# PYTHON (interpreter for a new venv, default python3; needs >= 3.11).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${SNIP_HERMES_VENV:-$ROOT/.venv-hermes}"
HERMES_VERSION="${HERMES_VERSION:-0.19.0}"
PYTHON="${PYTHON:-python3}"

log() { printf '==> %s\n' "$*" >&2; }

if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
# maturin (the build backend) runs as a command: the venv's bin must be on PATH.
export PATH="$VENV/bin:$PATH"

have_version() { "$PY" - "$1" "$2" <<'EOF'
import importlib.metadata as m, sys
try:
    ok = m.version(sys.argv[1]) == sys.argv[2] if sys.argv[2] else bool(m.version(sys.argv[1]))
except m.PackageNotFoundError:
    ok = False
sys.exit(0 if ok else 1)
EOF
}

if ! have_version hermes-agent "$HERMES_VERSION" || ! have_version pytest "" ||
    ! have_version pytest-xdist "" || ! have_version maturin ""; then
    log "installing hermes-agent==$HERMES_VERSION, pytest, pytest-xdist, maturin"
    "$PY" -m pip install -q --upgrade pip
    "$PY" -m pip install -q "hermes-agent==$HERMES_VERSION" pytest pytest-xdist "maturin>=1.9.4,<2"
fi
if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

# Rebuild the wheel only when something it is built from changed.
stamp="$VENV/.snip-build-stamp"
sources_hash="$(
    cd "$ROOT" &&
    find Cargo.toml Cargo.lock crates/snip-core crates/snip-store crates/snip-context \
        crates/snip-py python/pyproject.toml python/snip \
        -type f \( -name '*.rs' -o -name '*.toml' -o -name '*.lock' -o -name '*.py' -o -name '*.pyi' -o -name 'py.typed' \) \
        -not -path '*/target/*' -not -path '*/tests/*' -not -path '*/benches/*' -print0 2>/dev/null |
    sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sources_hash" ] || ! "$PY" -c 'import snip._native' 2>/dev/null; then
    log "building and installing snip's wheel (maturin, release)"
    "$PY" -m pip install -q --no-build-isolation --force-reinstall --no-deps "$ROOT/python"
    echo "$sources_hash" > "$stamp"
else
    log "snip's wheel is up to date"
fi

"$PY" -c 'import importlib.metadata as m, snip; print("hermes-agent", m.version("hermes-agent"), "| snip", snip.__version__)' >&2

cd "$ROOT"
cargo build --quiet --locked -p snip-cli
export SNIP_BIN="$ROOT/target/debug/snip"
# Two worker processes (pytest-xdist): each test starts Hermes's tools or a whole
# agent in its own HERMES_HOME and store, so they share nothing; most of a test is
# waiting on subprocesses, and two at a time took 115 s down to 72 s here.
exec "$PY" -m pytest tests/hermes -q -p no:cacheprovider -n 2 "$@"
