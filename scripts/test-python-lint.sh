#!/usr/bin/env bash
# Lints the Python package (python/snip, python/hermes-plugin): `ruff check`,
# `ruff format --check` and `mypy --strict`, with the settings in
# python/pyproject.toml. Run by scripts/test.sh with the other scripts/test-*.sh.
#
# ruff and mypy (pinned below) are installed from PyPI into the project-local,
# git-ignored venv .venv-lint/ on the first run and reused after; a venv whose pins
# differ is rebuilt. Environment: SNIP_LINT_VENV (venv path), PYTHON (interpreter for
# a new venv, default python3). Exit status: non-zero when a tool reports anything.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${SNIP_LINT_VENV:-$ROOT/.venv-lint}"
PYTHON="${PYTHON:-python3}"
PINS="ruff==0.17.6 mypy==2.4.1"

if [ "$(cat "$VENV/.pins" 2>/dev/null)" != "$PINS" ]; then
    rm -rf "$VENV"
    # Some Python builds ship venv without pip: then bootstrap it with ensurepip.
    if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
        rm -rf "$VENV"
        "$PYTHON" -m venv --without-pip "$VENV"
        "$VENV/bin/python" -m ensurepip --upgrade --default-pip >/dev/null
    fi
    # shellcheck disable=SC2086
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check $PINS
    echo "$PINS" >"$VENV/.pins"
fi

cd "$ROOT/python"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
# The plugin folder's name is not a module name; its one file only imports snip.hermes.
"$VENV/bin/mypy" --strict snip
