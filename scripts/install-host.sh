#!/usr/bin/env bash
# Installs one pinned real host from the npm registry into a project-local,
# git-ignored folder (.npm-<host>/), reused when the pinned version is already there,
# and prints the path of its binary on stdout (progress goes to stderr).
#
# Usage: scripts/install-host.sh claude-code|opencode|codex
#
#   host          package                          folder
#   claude-code   @anthropic-ai/claude-code@2.1.332 .npm-claude-code/
#   opencode      opencode-ai@1.18.33               .npm-opencode/
#   codex         @openai/codex@0.171.0             .npm-codex/
#
# Environment: CLAUDE_CODE_VERSION, OPENCODE_VERSION, CODEX_VERSION override the pins.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
claude-code) pkg=@anthropic-ai/claude-code version="${CLAUDE_CODE_VERSION:-2.1.332}" bin=claude ;;
opencode) pkg=opencode-ai version="${OPENCODE_VERSION:-1.18.33}" bin=opencode ;;
codex) pkg=@openai/codex version="${CODEX_VERSION:-0.171.0}" bin=codex ;;
*) echo "usage: $0 claude-code|opencode|codex" >&2; exit 2 ;;
esac

prefix="$PWD/.npm-$1"
exe="$prefix/node_modules/.bin/$bin"
installed="$(node -p "require('$prefix/node_modules/$pkg/package.json').version" 2>/dev/null || true)"
if [ "$installed" != "$version" ] || [ ! -x "$exe" ]; then
    echo "==> installing $pkg@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
fi
echo "$exe"
