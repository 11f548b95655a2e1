#!/usr/bin/env bash
# Captures real programs' output into fixtures/corpus-new/ (the second corpus set):
# each capture is the exact bytes a terminal tool receives, stdout and stderr merged,
# run under a pseudo-terminal (tty=yes: `script`, 120x40, TERM=xterm-256color) or
# into one pipe (tty=no), with its row in fixtures/corpus-new/MANIFEST.tsv.
#
# It installs what the programs need from the registries (PyPI, the npm registry, the
# Rust package registry, Debian packages unpacked without installing them) into
# .capture/ (git-ignored; later runs reuse it), writes sample inputs there, and runs
# the programs on them or on this repository. Local paths are replaced by
# /home/u/dev/snip and /home/u. Not run by CI: outputs carry timings, so a re-run
# changes bytes; the manifest's `known_failures` column is kept across runs.
#
# Usage: scripts/capture-corpus.sh            every capture
#        scripts/capture-corpus.sh NAME-PART  only captures whose file name contains it
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
W=$ROOT/.capture
OUT=$ROOT/fixtures/corpus-new
ONLY=${1:-}
mkdir -p "$W" "$OUT"
unset CI NO_COLOR FORCE_COLOR PIP_FIND_LINKS
export npm_config_cache=$W/npm-cache npm_config_update_notifier=false npm_config_fund=false
export CARGO_HOME=$W/cargo-home PIP_DISABLE_PIP_VERSION_CHECK=1

# cap FILE TTY DIR CLUE KEEP NOTES CMD: runs CMD in DIR, writes FILE and its row.
# CLUE `re:PATTERN` takes the pattern's first match. CUT=N keeps a prefix of <= N bytes.
FAILED=()
cap() {
    local file=$1 tty=$2 dir=$3 clue=$4 keep=$5 notes=$6 cmd=$7 rc=0
    if [ -n "$ONLY" ] && [[ $file != *"$ONLY"* ]]; then return 0; fi
    echo "--> $file"
    if [ "$tty" = yes ]; then
        (cd "$dir" && TERM=xterm-256color script -qfec "stty cols 120 rows 40; $cmd" /dev/null \
            </dev/null >"$OUT/$file" 2>&1) || rc=$?
    else
        (cd "$dir" && TERM=dumb bash -c "$cmd" </dev/null >"$OUT/$file" 2>&1) || rc=$?
    fi
    python3 scripts/capture/row.py "$OUT" "$file" "cd $dir && $cmd" "$tty" "$rc" "$clue" \
        "$keep" "$notes" "${CUT:-0}" "$ROOT=/home/u/dev/snip" "$HOME=/home/u" || FAILED+=("$file")
}

# ---------------------------------------------------------------- set-up
if [ ! -x "$W/venv/bin/pytest" ]; then
    python3 -m venv "$W/venv"
    "$W/venv/bin/pip" install -q pytest==8.3.4 mypy==1.13.0 ruff==0.8.4 requests==2.32.3 \
        rich==13.9.4 types-requests
fi
PY=$W/venv/bin
SITE=$("$PY/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

mkdir -p "$W/node"
if [ ! -d "$W/node/node_modules/vitest" ]; then
    (cd "$W/node" && [ -f package.json ] || echo '{"name":"capture-app","version":"1.0.0","private":true}' >"$W/node/package.json"
     cd "$W/node" && npm install --no-audit --loglevel=error jest@29.7.0 vitest@2.1.8 eslint@9.17.0 \
        @eslint/js@9.17.0 typescript@5.7.2 webpack@5.97.1 webpack-cli@5.1.4 vite@6.0.5 \
        lodash@4.17.21 bootstrap@5.3.3 express@4.21.2 react@18.3.1 react-dom@18.3.1)
fi
NB=$W/node/node_modules/.bin

mkdir -p "$W/deb"
if [ ! -x "$W/deb/usr/bin/tree" ] || [ ! -x "$W/deb/usr/lib/go-1.19/bin/go" ]; then
    (cd "$W/deb" && apt-get download tree golang-1.19-go golang-1.19-src >/dev/null \
        && for d in ./*.deb; do dpkg -x "$d" .; done && rm -f ./*.deb)
fi
export GOROOT=$W/deb/usr/lib/go-1.19 GOPATH=$W/gopath GOCACHE=$W/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
GO=$GOROOT/bin/go

# Sample inputs (small programs with real mistakes in them).
mkdir -p "$W/py" "$W/js" "$W/rust/src" "$W/go" "$W/web/src"
cat >"$W/py/test_invoice.py" <<'PYEOF'
import pytest
from decimal import Decimal


def total(lines, tax_rate):
    net = sum(Decimal(q) * Decimal(p) for q, p in lines)
    return (net * (1 + Decimal(tax_rate))).quantize(Decimal("0.01"))


@pytest.mark.parametrize("n", range(600))
def test_total_scales(n):
    assert total([(n, "1.10")], "0.2") == (Decimal(n) * Decimal("1.32")).quantize(Decimal("0.01"))


@pytest.mark.parametrize("rate", ["0.2", "0.05", "0.175"])
def test_rounding_half_even(rate):
    assert total([(3, "0.335")], rate) == Decimal("1.21")


def test_empty_invoice():
    assert total([], "0.2") == 0


def test_currency_mismatch():
    lines = [(1, "10.00"), (2, "EUR 3.00")]
    assert total(lines, "0.2") == Decimal("19.20")
PYEOF
cat >"$W/js/money.js" <<'JSEOF'
function total(lines, taxRate) {
  const net = lines.reduce((s, [q, p]) => s + q * p, 0);
  return Math.round(net * (1 + taxRate) * 100) / 100;
}
function slug(s) {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}
module.exports = { total, slug };
JSEOF
cat >"$W/js/money.test.js" <<'JSEOF'
const { total, slug } = require("./money");
describe("total", () => {
  for (let n = 0; n < 150; n++) {
    test(`scales with quantity ${n}`, () => {
      expect(total([[n, 1.1]], 0.2)).toBeCloseTo(n * 1.32, 2);
    });
  }
  test("rounds half cents like the ledger", () => {
    expect(total([[3, 0.335]], 0.2)).toBe(1.2);
  });
  test("keeps line items", () => {
    expect({ lines: [[1, 2]], currency: "EUR", tax: 0.2 }).toEqual({ lines: [[1, 2]], currency: "USD", tax: 0.2 });
  });
});
describe("slug", () => {
  test.each(["Hello World", "  trim  ", "Ünïcode title", "a--b"])("slug(%s)", (s) => {
    expect(slug(s)).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });
});
JSEOF
cat >"$W/js/money.vitest.test.js" <<'JSEOF'
import { describe, test, expect } from "vitest";
import money from "./money.js";
const { total, slug } = money;
describe("total", () => {
  for (let n = 0; n < 150; n++) {
    test(`scales with quantity ${n}`, () => {
      expect(total([[n, 1.1]], 0.2)).toBeCloseTo(n * 1.32, 2);
    });
  }
  test("rounds half cents like the ledger", () => {
    expect(total([[3, 0.335]], 0.2)).toBe(1.2);
  });
  test("keeps line items", () => {
    expect({ lines: [[1, 2]], currency: "EUR", tax: 0.2 }).toEqual({ lines: [[1, 2]], currency: "USD", tax: 0.2 });
  });
});
describe("slug", () => {
  test.each(["Hello World", "  trim  ", "Ünïcode title", "a--b"])("slug(%s)", (s) => {
    expect(slug(s)).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });
});
JSEOF
cat >"$W/js/eslint.config.js" <<'JSEOF'
const js = require("@eslint/js");
module.exports = [
  js.configs.recommended,
  {
    languageOptions: { sourceType: "commonjs", ecmaVersion: 2015, globals: { require: "readonly", module: "writable", exports: "writable", process: "readonly", Buffer: "readonly", __dirname: "readonly", setImmediate: "readonly", console: "readonly" } },
    rules: { "no-var": "error", "prefer-const": "error", eqeqeq: "error", "no-unused-vars": "error", curly: "error" },
  },
];
JSEOF
cat >"$W/js/tsconfig.json" <<'JSEOF'
{ "compilerOptions": { "allowJs": true, "checkJs": true, "noEmit": true, "strict": true, "target": "es2020", "module": "commonjs", "types": [] },
  "include": ["express-lib/**/*.js"] }
JSEOF
cat >"$W/web/src/index.js" <<'JSEOF'
import _ from "lodash";
import React from "react";
import { createRoot } from "react-dom/client";
import "bootstrap/dist/css/bootstrap.min.css";
const rows = _.chunk(_.range(1, 100), 10).map((r, i) => React.createElement("li", { key: i }, r.join(", ")));
createRoot(document.getElementById("app")).render(React.createElement("ul", null, rows));
JSEOF
cat >"$W/web/webpack.config.js" <<'JSEOF'
module.exports = { mode: "production", entry: "./src/index.js", output: { path: __dirname + "/dist-webpack" },
  module: { rules: [{ test: /\.css$/, type: "asset/resource" }] } };
JSEOF
cat >"$W/web/index.html" <<'JSEOF'
<!doctype html><html><body><div id="app"></div><script type="module" src="/src/index.js"></script></body></html>
JSEOF
ln -sfn ../node/node_modules "$W/web/node_modules"
ln -sfn ../node/node_modules "$W/js/node_modules"
echo 'module.exports = { testMatch: ["**/money.test.js"] };' >"$W/js/jest.config.js"
rm -rf "$W/js/express-lib" && cp -r "$W/node/node_modules/express/lib" "$W/js/express-lib"
cat >"$W/rust/Cargo.toml" <<'RSEOF'
[package]
name = "ledger-report"
version = "0.1.0"
edition = "2021"

[workspace]

[dependencies]
anyhow = "=1.0.94"
RSEOF
cat >"$W/rust/src/main.rs" <<'RSEOF'
use anyhow::Result;
use std::collections::HashMap;

fn parse_amount(s: &String) -> Result<f64> {
    let s = s.trim().to_string();
    if s.len() == 0 {
        return Ok(0.0);
    }
    Ok(s.parse::<f64>()?)
}

fn totals(lines: &Vec<(String, String)>) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for i in 0..lines.len() {
        let (acct, amount) = &lines[i];
        let v = parse_amount(amount).unwrap_or(0.0);
        if out.contains_key(acct) == false {
            out.insert(acct.clone(), 0.0);
        }
        *out.get_mut(acct).unwrap() += v;
    }
    return out;
}

fn main() -> Result<()> {
    let lines = vec![("cash".to_string(), " 10.5".to_string()), ("bank".to_string(), "".to_string())];
    let t = totals(&lines);
    let mut keys: Vec<_> = t.keys().collect();
    keys.sort();
    for k in keys.iter() {
        println!("{}: {}", k, t[*k] as f32 as f64);
    }
    let unused_total = 0;
    Ok(())
}
RSEOF
cat >"$W/go/go.mod" <<'GOEOF'
module example.com/ratelimit

go 1.19
GOEOF
cat >"$W/go/bucket.go" <<'GOEOF'
package ratelimit

import "time"

// Bucket is a token bucket.
type Bucket struct {
	Cap, Tokens int
	Every       time.Duration
	last        time.Time
}

// Take removes one token at now, refilling first.
func (b *Bucket) Take(now time.Time) bool {
	if !b.last.IsZero() {
		refill := int(now.Sub(b.last) / b.Every)
		b.Tokens += refill
		if b.Tokens > b.Cap {
			b.Tokens = b.Cap
		}
	}
	b.last = now
	if b.Tokens == 0 {
		return false
	}
	b.Tokens--
	return true
}
GOEOF
cat >"$W/go/bucket_test.go" <<'GOEOF'
package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

func TestTakeSequence(t *testing.T) {
	for n := 0; n < 120; n++ {
		t.Run(fmt.Sprintf("burst_%03d", n), func(t *testing.T) {
			b := &Bucket{Cap: n + 1, Tokens: n + 1, Every: time.Second}
			start := time.Unix(1700000000, 0)
			for i := 0; i <= n; i++ {
				if !b.Take(start) {
					t.Fatalf("take %d of %d refused", i, n+1)
				}
			}
		})
	}
}

func TestRefillKeepsRemainder(t *testing.T) {
	b := &Bucket{Cap: 10, Tokens: 0, Every: 300 * time.Millisecond}
	t0 := time.Unix(1700000000, 0)
	b.Take(t0)
	b.Take(t0.Add(500 * time.Millisecond))
	if got := b.Take(t0.Add(700 * time.Millisecond)); !got {
		t.Errorf("Take after 700ms = %v, want true (remainder of the first refill lost)", got)
	}
}

func TestCapZero(t *testing.T) {
	b := &Bucket{Cap: 0, Every: time.Second}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("panic: %v", r)
		}
	}()
	var m map[string]int
	m["x"] = b.Tokens
}
GOEOF
# A scratch clone of this repository with uncommitted changes, for git status.
if [ ! -d "$W/repo/.git" ]; then git clone -q "$ROOT" "$W/repo"; fi
(cd "$W/repo" && git checkout -q -f ed01d4c && git clean -qfd \
    && sed -i 's/^/    /' crates/snip-core/src/lib.rs && rm -f docs/benchmark.md \
    && mkdir -p notes && for i in $(seq 1 40); do echo "draft $i" >"notes/draft-$i.md"; done \
    && git mv README.md README.txt && echo "ok" >>Cargo.toml)

# ---------------------------------------------------------------- captures
T=$W/py
cap pytest-params-fail-tty.txt yes "$T" "re:FAILED test_invoice.py::test_currency_mismatch - [^\r\n]*" \
    "the FAILURES section with each assertion and the short test summary info lines; the dots may be collapsed" \
    "605 tests, 3 failures (2 rounding params, a decimal.InvalidOperation)" \
    "$PY/python -m pytest test_invoice.py -p no:cacheprovider"
cap pytest-verbose-fail-notty.txt no "$T" "re:=+ [0-9]+ failed, [0-9]+ passed in [0-9.]+s =+" \
    "the FAILED lines, the tracebacks and the final count; the 602 PASSED lines can be counted" \
    "pytest -v: one line per test" \
    "$PY/python -m pytest -v test_invoice.py -p no:cacheprovider"
cap mypy-strict-requests-notty.txt no "$T" "re:Found [0-9]+ errors? in [0-9]+ files? \\(checked [0-9]+ source files?\\)" \
    "every distinct error kind with its location, and the Found N errors line" \
    "mypy --strict on the installed requests package" \
    "$PY/mypy --strict --no-incremental --cache-dir=/dev/null --no-color-output -p requests"
cap ruff-check-requests-notty.txt no "$SITE" "re:Found [0-9]+ errors?\\." \
    "the rule codes with locations (many repeat), the Found N errors line and the fix hint" \
    "ruff check with every rule on the installed requests package, concise output" \
    "$PY/ruff check --no-cache --select ALL --output-format concise requests"
cap python-requests-connrefused-notty.txt no "$T" "re:requests\\.exceptions\\.ConnectionError: HTTPConnectionPool\\(host='127\\.0\\.0\\.1', port=9\\)" \
    "the three chained tracebacks' last frames and the final requests.exceptions.ConnectionError line" \
    "nothing listens on port 9" \
    "$PY/python -c 'import requests; requests.get(\"http://127.0.0.1:9/health\", timeout=2)'"
cap pip-show-files-rich-notty.txt no "$T" "re:Location: [^\n]*" \
    "the Name/Version/Requires header and the Files: listing (may be elided)" "" \
    "$PY/pip show -f rich"
cap pip-resolution-impossible-notty.txt no "$T" "ERROR: ResolutionImpossible" \
    "the conflict lines (which package wants which version) and the ResolutionImpossible error" \
    "resolver conflict from the registry's metadata" \
    "$PY/pip install --dry-run --no-cache-dir 'rich==13.9.4' 'pygments<2.13'"
cap csv-record-rich-notty.txt no "$SITE" "rich/progress.py,sha256=" \
    "the CSV rows (path,hash,size): any row can be asked for, so head, tail and a count" \
    "the RECORD file of an installed wheel is CSV" \
    "cat rich-13.9.4.dist-info/RECORD"

# A local HTTP server for curl -v; its access log becomes a syslog-format log below.
PORT=18731
(cd "$ROOT" && exec python3 -u -m http.server $PORT --bind 127.0.0.1 >"$W/http.log" 2>&1) &
SRV=$!
trap 'kill $SRV 2>/dev/null || true' EXIT
sleep 1
cap curl-verbose-404-tty.txt yes "$ROOT" "re:< HTTP/1\\.0 404 File not found" \
    "the request and response headers of both requests, the 404 status line and the curl (22) error" \
    "curl -v against python3 -m http.server on loopback: a directory listing then a missing file" \
    "curl -v -o /dev/null http://127.0.0.1:$PORT/ && curl -v -f http://127.0.0.1:$PORT/releases/v2/agent.tar.gz"
cap curl-verbose-listing-notty.txt no "$ROOT" "re:< Content-Length: [0-9]+" \
    "the headers (> request, < response) and the HTML listing body" \
    "curl -v printing the directory listing of the repository root" \
    "curl -sv http://127.0.0.1:$PORT/crates/"
for i in $(seq 1 400); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" || true; done
curl -s -o /dev/null "http://127.0.0.1:$PORT/Cargo.toml" || true
curl -s -o /dev/null -X POST "http://127.0.0.1:$PORT/api/jobs" || true
for i in $(seq 1 200); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" || true; done
kill $SRV 2>/dev/null || true
cap syslog-http-server-notty.txt no "$W" "re:http-server\\[[0-9]+\\]: [^\n]*code 501, message Unsupported method \\('POST'\\)" \
    "the distinct lines (the Cargo.toml GET, the 501 on POST) and counts of the /healthz 404 runs" \
    "the server's access log sent through logger (RFC 3164 lines, as syslog writes them) to a UDP port nobody reads" \
    "logger -s -d -n 127.0.0.1 -P 5514 --rfc3164 -t http-server -i -f http.log"

T=$W/js
cap jest-fail-tty.txt yes "$T" "re:Tests: +[0-9]+ failed, [0-9]+ passed, [0-9]+ total" \
    "both failing tests with their expected/received diffs and the Tests: summary line" \
    "jest 29, 156 tests, 2 failures" "$NB/jest --ci=false --colors money.test.js"
cap jest-verbose-fail-notty.txt no "$T" "re:● total › keeps line items" \
    "the two failures with their diffs and the summary; the 154 passing lines can be counted" \
    "jest --verbose" "$NB/jest --verbose money.test.js"
cap vitest-run-fail-tty.txt yes "$T" "re:AssertionError: expected 1\\.21 to be 1\\.2 [^\r\n]*" \
    "both FAIL blocks with the diff and source excerpt, and the Tests summary" \
    "vitest 2, run mode" "$NB/vitest run --reporter=default money.vitest.test.js"
cap vitest-verbose-fail-notty.txt no "$T" "re:Tests +[0-9]+ failed \\| [0-9]+ passed \\([0-9]+\\)" \
    "the two failures and the summary; the passing lines can be counted" \
    "vitest --reporter=verbose, no tty" "$NB/vitest run --reporter=verbose money.vitest.test.js"
cap eslint-express-notty.txt no "$T" "re:✖ [0-9]+ problems \\([0-9]+ errors?, [0-9]+ warnings?\\)" \
    "each file's header and error lines with rule names, and the problems total" \
    "eslint 9 recommended + no-var/prefer-const/eqeqeq/curly on a copy of express 4.21.2's lib/" \
    "$NB/eslint --no-color express-lib"
cap tsc-checkjs-express-tty.txt yes "$T" "re:Found [0-9]+ errors in [0-9]+ files\\." \
    "the first errors of each code with their locations and the Found N errors summary" \
    "tsc --checkJs --strict on a copy of express 4.21.2's lib (real JS, not written for tsc), pretty output" \
    "$NB/tsc -p tsconfig.json --pretty"
cap tsc-checkjs-express-notty.txt no "$T" "re:error TS7016: Could not find a declaration file for module '[^']+'" \
    "the error lines (file(line,col): error TSnnnn) with codes" \
    "same check, plain output (one line per error)" \
    "$NB/tsc -p tsconfig.json"

T=$W/web
cap webpack-build-notty.txt no "$T" "re:webpack [0-9.]+ compiled successfully in [0-9]+ ms" \
    "the asset table with sizes, the module groups and the compiled line" \
    "webpack 5 production build of lodash + react + bootstrap css" \
    "rm -rf dist-webpack && $NB/webpack --no-color"
cap vite-build-tty.txt yes "$T" "re:✓ built in [0-9.]+m?s" \
    "the module count, each output file with its size and the built-in line" \
    "vite 6 production build of the same app" \
    "$NB/vite build --outDir dist-vite --emptyOutDir"
T=$W/node
cap npm-view-express-json-notty.txt no "$T" "\"latest\": \"" \
    "valid JSON: name, dist-tags.latest, dependencies; the versions list and time object may be elided" \
    "pretty JSON straight from the registry" "npm view express --json"
cap npm-view-webpack-json-notty.txt no "$T" "re:\"latest\": \"5\\.[0-9.]+\"" \
    "valid JSON: name, dist-tags.latest, dependencies; the versions list and time object may be elided" \
    "pretty JSON straight from the registry, over the budget" "npm view webpack@5.97.1 --json"
cap npm-ls-all-tty.txt yes "$T" "re:express@4\\.21\\.2\\b" \
    "the top-level packages and a count of the nested tree" "" "npm ls --all"
cap npm-ls-all-json-notty.txt no "$T" "\"name\": \"capture-app\"" \
    "valid JSON with the top-level dependencies and their versions" "nested dependency tree" \
    "npm ls --all --json"
cap package-lock-cat-notty.txt no "$T" "\"node_modules/vitest\": {" \
    "valid JSON: lockfileVersion and the packages (may be elided)" "" "cat package-lock.json"
cap lodash-min-js-notty.txt no "$T" "Released under MIT license <https://lodash.com/license>" \
    "the licence header; the minified body may be elided" "a minified JS read" \
    "cat node_modules/lodash/lodash.min.js"
cap bootstrap-min-css-notty.txt no "$T" "re:Bootstrap  v5\\.3\\.3 \\(https://getbootstrap\\.com/\\)" \
    "the header comment; the minified rules may be elided" "a minified CSS read" \
    "cat node_modules/bootstrap/dist/css/bootstrap.min.css"
mkdir -p "$W/eresolve" && echo '{"name":"eresolve-demo","version":"1.0.0"}' >"$W/eresolve/package.json"
cap npm-install-eresolve-notty.txt no "$W/eresolve" "npm error code ERESOLVE" \
    "the ERESOLVE block: what was found, the conflicting peer and the --legacy-peer-deps hint" \
    "react 18 with react-dom 16 (peer react@^16.14.0)" \
    "npm install --no-audit --dry-run react@18.3.1 react-dom@16.14.0"

T=$W/rust
cap cargo-clippy-warnings-tty.txt yes "$T" 're:warning: `ledger-report` \(bin "ledger-report"\) generated [0-9]+ warnings' \
    "each lint with its location and help line, and the generated-N-warnings line" \
    "clippy on a small crate with one registry dependency, fresh CARGO_HOME" \
    "CARGO_TARGET_DIR=$W/rust/target cargo clippy --color always -- -W clippy::pedantic"
cap cargo-tree-snip-notty.txt no "$ROOT" "re:snip-core v[0-9.]+ \\([^)]*\\)" \
    "the workspace crates and their direct dependencies; repeated (*) subtrees may be elided" \
    "the dependency tree of this repository, offline (from the user's registry cache)" \
    "CARGO_HOME=$HOME/.cargo cargo tree --offline --workspace"
cap cargo-lock-cat-notty.txt no "$ROOT" "name = \"tiktoken-rs\"" \
    "the [[package]] entries (name, version); checksums may be elided" "this repository's Cargo.lock" \
    "cat Cargo.lock"

T=$W/go
cap go-test-fail-notty.txt no "$T" "re:bucket_test\\.go:[0-9]+: Take after 700ms = false, want true[^\n]*" \
    "the --- FAIL lines with their messages, the panic and the FAIL summary; the 120 passing subtests can be counted" \
    "go 1.19 (Debian package, unpacked), go test -v" "$GO test -v -count=1 ./..."
cap go-test-fail-tty.txt yes "$T" "re:--- FAIL: TestCapZero \\([0-9.]+s\\)" \
    "the failures, the panic and the FAIL line" "go test without -v" "$GO test -count=1 ./..."

cap git-log-p-snip-notty.txt no "$ROOT" "re:commit 6[0-9a-f]{39}" \
    "every commit header and the hunks (whole hunks only)" "git log -p of this repository's last 25 commits" \
    "git log -p -n 25 --no-color ed01d4c"
cap git-log-stat-tty.txt yes "$ROOT" "re:[0-9]+ files? changed, [0-9]+ insertions?\\(\\+\\)" \
    "each commit header and its stat summary line" "coloured, the pager off" \
    "git --no-pager log --stat -n 60 --color=always ed01d4c"
cap git-blame-lib-notty.txt no "$ROOT" "re:\\) //! snip-core[^\n]*" \
    "the blamed lines (commit, author, line number); the code itself" "" \
    "git blame ed01d4c -- crates/snip-core/src/lib.rs"
cap git-status-dirty-tty.txt yes "$W/repo" "renamed:    README.md -> README.txt" \
    "the staged rename, the modified files, the deleted file and the untracked notes/ directory" \
    "a scratch clone with edits" "git status"
cap git-diff-small-tty.txt yes "$W/repo" "re:@@ -[0-9]+,[0-9]+ \\+[0-9]+,[0-9]+ @@" \
    "the whole diff byte for byte (under the budget)" "coloured diff of two edited files" \
    "git --no-pager diff --color=always -- Cargo.toml docs/"

cap find-node-modules-dts-notty.txt no "$W/node" "node_modules/typescript/lib/lib.dom.d.ts" \
    "the first and last paths and a count; any path can be asked for" "every .d.ts file under node_modules" \
    "find node_modules -name '*.d.ts' | sort"
cap tree-express-tty.txt yes "$W/node" "re:[0-9]+ directories, [0-9]+ files" \
    "the top of the tree and the directories/files count" "tree 2.1 (Debian package, unpacked), coloured" \
    "$W/deb/usr/bin/tree -C node_modules/express node_modules/vite"
cap du-node-modules-notty.txt no "$W/node" "node_modules/vite/dist" \
    "the largest directories and the total" "" "du -h -d 2 node_modules | sort -k2"
cap apt-get-install-simulate-notty.txt no "$ROOT" "re:[0-9]+ upgraded, [0-9]+ newly installed, [0-9]+ to remove and [0-9]+ not upgraded\\." \
    "the NEW packages count, the summary line; the Inst/Conf lines can be counted" \
    "simulated install (-s): nothing is changed" \
    "apt-get install -s --no-install-recommends texlive-latex-extra"
cap dpkg-l-notty.txt no "$ROOT" "re:ii  dpkg +[^\n]*" \
    "the table header and the package rows (may be elided)" "this machine's installed packages" "COLUMNS=160 dpkg -l"

"$PY/python" - "$W/ledger.db" "$SITE/rich-13.9.4.dist-info/RECORD" <<'PYEOF'
import csv, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("drop table if exists record")
db.execute("create table record (path text, hash text, size integer)")
with open(sys.argv[2], newline="") as f:
    db.executemany("insert into record values (?, ?, ?)", ((p, h, int(s) if s else None) for p, h, s in csv.reader(f)))
db.commit()
PYEOF
cap sqlite-box-tty.txt yes "$W" "re:│ rich/_emoji_codes\\.py +│ +[0-9]+ │" \
    "the table border and every row (the largest files), and the parse error" \
    "sqlite3 -box, then a query with a typo" \
    "sqlite3 -box ledger.db 'select path, size from record order by size desc limit 60; select pth from record;'"
cap sqlite-column-notty.txt no "$W" "re:rich/[a-z_]+\\.py +[0-9]+ +sha256=" \
    "the header and the rows (may be elided)" "sqlite3 -column, every row" \
    "sqlite3 -header -column ledger.db 'select path, size, hash from record order by path'"
echo "done: $(ls "$OUT" | grep -vc MANIFEST) captures in $OUT"
if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "not recorded (clue not found; the file is left for inspection): ${FAILED[*]}" >&2
    exit 1
fi
