//! The eight generated tool-output shapes, each with one planted clue.
//!
//! Sizes follow the published reference table for this kind of tool (see the issue
//! "`snip bench`: the proof"): a 12,000-line command output (~61 kB), a JSON tool
//! envelope (~86 kB), a 2,000-case test run (~100 kB), a 3,000-frame traceback
//! (~359 kB), a unified diff (~430 kB), a 900-row SQL result table (~47 kB), an
//! 8,000-line build log (~335 kB) and an 8,000-item JSON array (~207 kB).
//!
//! Every shape is built from a fixed seed with a SplitMix64 generator (`rng.rs`), so the bytes are the
//! same on every run and machine. The clue is an exact substring that occurs once.
//! Generated shapes are shapes, not captures: they show how the rules behave on a
//! kind of output, not what a particular program prints.

use crate::rng::Rng;
use crate::Kind;
use std::fmt::Write as _;

/// One generated shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Stable short name, e.g. `build-log`.
    pub name: &'static str,
    /// One line: what the shape imitates.
    pub description: &'static str,
    /// How the output is judged (text, JSON that must stay valid, diff that must stay
    /// byte-identical).
    pub kind: Kind,
    /// The size, in bytes, the reference table names for this shape.
    pub nominal_bytes: usize,
    /// The planted clue: an exact substring of `input`, occurring once.
    pub clue: &'static str,
    /// The generated tool output.
    pub input: Vec<u8>,
}

/// The names of the eight shapes, in table order.
pub const NAMES: [&str; 8] = [
    "command-output",
    "json-envelope",
    "test-run",
    "traceback",
    "diff",
    "sql-table",
    "build-log",
    "json-array",
];

/// All eight shapes, in table order ([`NAMES`]).
pub fn all() -> Vec<Shape> {
    vec![
        command_output(),
        json_envelope(),
        test_run(),
        traceback(),
        diff(),
        sql_table(),
        build_log(),
        json_array(),
    ]
}

/// The clue of [`command_output`].
pub const COMMAND_OUTPUT_CLUE: &str = "/var/tmp/out/6001.part: No space left on device";

/// A 12,000-line command output (`seq`-like counter lines, ~61 kB) with one stderr
/// line merged in the middle; the clue is that line's message.
pub fn command_output() -> Shape {
    let mut s = String::with_capacity(64 * 1024);
    for i in 1..=12_000u32 {
        if i == 6_001 {
            let _ = writeln!(s, "export.sh: line 14: {COMMAND_OUTPUT_CLUE}");
        }
        let _ = writeln!(s, "{i}");
    }
    Shape {
        name: "command-output",
        description: "12,000-line command output with one stderr line in the middle",
        kind: Kind::Text,
        nominal_bytes: 61_000,
        clue: COMMAND_OUTPUT_CLUE,
        input: s.into_bytes(),
    }
}

/// The clue of [`json_envelope`].
pub const JSON_ENVELOPE_CLUE: &str =
    "duplicate key value violates unique constraint tenants_slug_key";

/// A JSON tool envelope (~86 kB): a shell tool's result with a long `stdout` string of
/// service log lines; the clue is in an ERROR line in the middle of that string.
pub fn json_envelope() -> Shape {
    let mut rng = Rng::new(0x5E_0002);
    let paths = [
        "/api/v1/items",
        "/api/v1/orders",
        "/api/v1/tenants",
        "/healthz",
        "/api/v1/users",
        "/metrics",
    ];
    let methods = ["GET", "GET", "GET", "POST", "PUT"];
    let mut out = String::with_capacity(90 * 1024);
    let lines = 860u32;
    for i in 0..lines {
        let ms = i * 517;
        let ts = format!(
            "2024-05-14T09:{:02}:{:02}.{:03}Z",
            (ms / 60_000) % 60,
            (ms / 1000) % 60,
            ms % 1000
        );
        if i == lines / 2 {
            let _ = writeln!(
                out,
                "{ts} ERROR migrate: 0042_add_tenant_index failed: {JSON_ENVELOPE_CLUE}"
            );
            continue;
        }
        let path = rng.pick(&paths);
        let method = rng.pick(&methods);
        let id = rng.below(10_000);
        let status = if rng.below(40) == 0 { 404 } else { 200 };
        let dur = 1 + rng.below(250);
        let _ = writeln!(
            out,
            "{ts} INFO  http request method={method} path={path}/{id} status={status} dur_ms={dur}"
        );
    }
    let envelope = serde_json::json!({
        "tool": "run_shell",
        "call_id": "call_7f3a91c2",
        "command": "docker compose logs --no-color api",
        "exit_code": 0,
        "duration_ms": 48211,
        "stdout": out,
        "stderr": "",
        "truncated": false,
    });
    let mut input = serde_json::to_vec(&envelope).expect("a json! value always serializes");
    input.push(b'\n');
    Shape {
        name: "json-envelope",
        description: "JSON tool envelope; the clue is inside the long stdout string",
        kind: Kind::Json,
        nominal_bytes: 86_000,
        clue: JSON_ENVELOPE_CLUE,
        input,
    }
}

/// The clue of [`test_run`].
pub const TEST_RUN_CLUE: &str = "not ok 1034 - headers: decodes latin-1 charset";

/// A TAP test run of 2,000 cases (~100 kB) with one failure (and its diagnostic block)
/// in the middle; the summary at the end counts it but does not name it.
pub fn test_run() -> Shape {
    let mut rng = Rng::new(0x5E_0003);
    let suites = ["codec", "headers", "router", "cache", "auth", "session"];
    let verbs = [
        "parses", "encodes", "decodes", "rejects", "accepts", "routes",
    ];
    let objects = ["header", "body", "cookie", "charset", "token", "path"];
    let mut s = String::with_capacity(104 * 1024);
    s.push_str("TAP version 13\n");
    for n in 1..=2_000u32 {
        if n == 1_034 {
            let _ = writeln!(s, "{TEST_RUN_CLUE}");
            s.push_str(
                "  ---\n  operator: strictEqual\n  expected: 'iso-8859-1'\n  actual: 'latin1'\n  \
                 at: test/headers.test.js:88:12\n  ...\n",
            );
            continue;
        }
        let suite = rng.pick(&suites);
        let verb = rng.pick(&verbs);
        let object = rng.pick(&objects);
        let ms = rng.below(2_000);
        let _ = writeln!(
            s,
            "ok {n} - {suite}: {verb} {object} #{n:04} # time={}.{:03}ms",
            ms / 1000,
            ms % 1000
        );
    }
    s.push_str("1..2000\n# tests 2000\n# pass  1999\n# fail  1\n");
    Shape {
        name: "test-run",
        description: "TAP run of 2,000 cases, one failure in the middle",
        kind: Kind::Text,
        nominal_bytes: 100_000,
        clue: TEST_RUN_CLUE,
        input: s.into_bytes(),
    }
}

/// The clue of [`traceback`].
pub const TRACEBACK_CLUE: &str = "KeyError: 'region_override_eu_west_3'";

/// A Python traceback of 3,000 frames (~359 kB) through three mutually recursive
/// functions; the clue is the exception line at the end.
pub fn traceback() -> Shape {
    let frames = [
        (
            "/srv/app/pricing/rules.py",
            412,
            "evaluate_rule",
            "return self.apply_node(node.children[idx], ctx, depth + 1)",
        ),
        (
            "/srv/app/pricing/nodes.py",
            137,
            "apply_node",
            "value = self.resolve_ref(node.ref, ctx, depth=depth)",
        ),
        (
            "/srv/app/pricing/refs.py",
            58,
            "resolve_ref",
            "return self.evaluate_rule(ctx.rules[ref.name], ctx, depth)",
        ),
    ];
    let mut s = String::with_capacity(370 * 1024);
    s.push_str("Traceback (most recent call last):\n");
    s.push_str("  File \"/srv/app/pricing/cli.py\", line 44, in <module>\n    main()\n");
    for i in 0..3_000usize {
        let (file, line, func, code) = frames[i % frames.len()];
        let _ = writeln!(s, "  File \"{file}\", line {line}, in {func}\n    {code}");
    }
    s.push_str(
        "  File \"/srv/app/pricing/engine/context.py\", line 91, in lookup\n    \
         return self.overrides[region][key]\n           ~~~~~~~~~~~~~~~~~~~~~~^^^^^\n",
    );
    let _ = writeln!(s, "{TRACEBACK_CLUE}");
    Shape {
        name: "traceback",
        description: "Python traceback of 3,000 frames; the clue is the exception line",
        kind: Kind::Text,
        nominal_bytes: 359_000,
        clue: TRACEBACK_CLUE,
        input: s.into_bytes(),
    }
}

/// The clue of [`diff`].
pub const DIFF_CLUE: &str = "RetryBudget::new(17, Duration::from_millis(250))";

/// A `git diff` of many source files (~430 kB); the clue is an added line in a hunk
/// of a file in the middle.
pub fn diff() -> Shape {
    let mut rng = Rng::new(0x5E_0005);
    let dirs = ["net", "store", "http", "sync", "codec", "cli"];
    let idents = [
        "buffer", "offset", "request", "response", "handle", "config", "stream", "cursor", "entry",
        "budget", "limit", "frame",
    ];
    let types = [
        "usize", "u64", "Bytes", "Request", "Config", "Entry", "Frame",
    ];
    let files = 82usize;
    let mut s = String::with_capacity(440 * 1024);
    for f in 0..files {
        let dir = rng.pick(&dirs);
        let path = format!("src/{dir}/module_{f:03}.rs");
        let _ = writeln!(s, "diff --git a/{path} b/{path}");
        let _ = writeln!(
            s,
            "index {:07x}..{:07x} 100644",
            rng.below(1 << 28),
            rng.below(1 << 28)
        );
        let _ = writeln!(s, "--- a/{path}\n+++ b/{path}");
        let mut line = 10 + rng.below(40);
        for h in 0..4usize {
            let mut body = String::new();
            let (mut old, mut new) = (0u64, 0u64);
            for k in 0..18usize {
                let a = rng.pick(&idents);
                let b = rng.pick(&idents);
                let t = rng.pick(&types);
                let code = match rng.below(4) {
                    0 => format!("let {a}_{k} = self.{b}.get({k}).copied().unwrap_or_default();"),
                    1 => format!("fn {a}_{b}(&mut self, {b}: {t}) -> Result<{t}, Error> {{"),
                    2 => format!("self.{a}.push({b}_{k}.clone()); // keep {b} ordered"),
                    _ => format!("if {a}.len() > {b}_limit {{ return Err(Error::Full({k})); }}"),
                };
                let planted = f == files / 2 && h == 2 && k == 9;
                match (planted, rng.below(6)) {
                    (true, _) => {
                        let _ = writeln!(body, "-    let retry_budget = RetryBudget::default();");
                        let _ = writeln!(body, "+    let retry_budget = {DIFF_CLUE};");
                        old += 1;
                        new += 1;
                    }
                    (false, 0) => {
                        let _ = writeln!(body, "-    {code}");
                        old += 1;
                    }
                    (false, 1) => {
                        let _ = writeln!(body, "+    {code}");
                        new += 1;
                    }
                    _ => {
                        let _ = writeln!(body, "     {code}");
                        old += 1;
                        new += 1;
                    }
                }
            }
            let _ = writeln!(
                s,
                "@@ -{line},{old} +{line},{new} @@ impl Module{f:03} {{\n{}",
                body.trim_end_matches('\n')
            );
            line += old + 20 + rng.below(60);
        }
    }
    Shape {
        name: "diff",
        description: "git diff of 82 files; the clue is an added line in a middle hunk",
        kind: Kind::Diff,
        nominal_bytes: 430_000,
        clue: DIFF_CLUE,
        input: s.into_bytes(),
    }
}

/// The clue of [`sql_table`].
pub const SQL_TABLE_CLUE: &str = "initech-07731 | disputed";

/// A psql result table of 900 rows (~47 kB); the clue is a middle row.
pub fn sql_table() -> Shape {
    let mut rng = Rng::new(0x5E_0006);
    let customers = ["acme", "globex", "umbrella", "hooli", "stark", "wayne"];
    let statuses = ["paid", "pending", "refunded", "shipped"];
    let mut s = String::with_capacity(50 * 1024);
    s.push_str("  id  |   customer    |  status  |  amount  |  month\n");
    s.push_str("------+---------------+----------+----------+---------\n");
    for id in 1..=900u32 {
        let (customer, status) = if id == 451 {
            ("initech-07731".to_string(), "disputed")
        } else {
            (
                format!("{}-{:04}", rng.pick(&customers), rng.below(10_000)),
                *rng.pick(&statuses),
            )
        };
        let cents = 500 + rng.below(99_500);
        let month = 1 + rng.below(12);
        let _ = writeln!(
            s,
            " {id:>4} | {customer:<13} | {status:<8} | {:>5}.{:02} | 2024-{month:02}",
            cents / 100,
            cents % 100,
        );
    }
    s.push_str("(900 rows)\n");
    Shape {
        name: "sql-table",
        description: "psql result of 900 rows; the clue is a middle row",
        kind: Kind::Text,
        nominal_bytes: 47_000,
        clue: SQL_TABLE_CLUE,
        input: s.into_bytes(),
    }
}

/// The clue of [`build_log`].
pub const BUILD_LOG_CLUE: &str = "implicit declaration of function 'phy_read_mmd_indirect'";

/// A kernel-style `make -k` build log of 8,000 lines (~335 kB) with one compiler error
/// in the middle; the final `make` line says a target failed but not why.
pub fn build_log() -> Shape {
    let mut rng = Rng::new(0x5E_0007);
    let dirs = [
        "drivers/net/phy",
        "drivers/gpu/drm/amd/display",
        "fs/btrfs/tests",
        "net/ipv4/netfilter",
        "sound/soc/codecs",
        "drivers/usb/core",
    ];
    let steps = ["CC     ", "CC [M] ", "AR     ", "LD [M] "];
    let objects = [
        "core", "main", "ioctl", "debugfs", "sysfs", "trace", "quirks",
    ];
    let mut s = String::with_capacity(340 * 1024);
    let total = 8_000usize;
    let mut n = 0usize;
    while n < total - 1 {
        if n == total / 2 {
            let lines = [
                "drivers/net/phy/phy_4012.c: In function 'phy_probe_4012':".to_string(),
                format!(
                    "drivers/net/phy/phy_4012.c:217:9: error: {BUILD_LOG_CLUE} \
                     [-Werror=implicit-function-declaration]"
                ),
                "  217 |         phy_read_mmd_indirect(phydev, MDIO_MMD_PCS, 0x14);".to_string(),
                "      |         ^~~~~~~~~~~~~~~~~~~~~".to_string(),
                "cc1: some warnings being treated as errors".to_string(),
                "make[4]: *** [scripts/Makefile.build:243: drivers/net/phy/phy_4012.o] Error 1"
                    .to_string(),
            ];
            for l in lines {
                let _ = writeln!(s, "{l}");
                n += 1;
            }
            continue;
        }
        let dir = rng.pick(&dirs);
        let step = rng.pick(&steps);
        let object = rng.pick(&objects);
        let _ = writeln!(s, "  {step} {dir}/{object}_{:04}.o", rng.below(10_000));
        n += 1;
    }
    s.push_str("make: *** [Makefile:1913: drivers] Error 2\n");
    Shape {
        name: "build-log",
        description: "make -k log of 8,000 lines, one compiler error in the middle",
        kind: Kind::Text,
        nominal_bytes: 335_000,
        clue: BUILD_LOG_CLUE,
        input: s.into_bytes(),
    }
}

/// The clue of [`json_array`].
pub const JSON_ARRAY_CLUE: &str = "quarantined";

/// An 8,000-item JSON array on one line (~207 kB); the clue is the `state` of the
/// middle item.
pub fn json_array() -> Shape {
    let mut rng = Rng::new(0x5E_0008);
    let states = ["ok", "hold", "sent"];
    let mut s = String::with_capacity(210 * 1024);
    s.push('[');
    for id in 0..8_000u32 {
        if id > 0 {
            s.push(',');
        }
        let state = if id == 4_000 {
            JSON_ARRAY_CLUE
        } else {
            rng.pick(&states)
        };
        let _ = write!(s, "{{\"id\":{id},\"state\":\"{state}\"}}");
    }
    s.push_str("]\n");
    Shape {
        name: "json-array",
        description: "JSON array of 8,000 items on one line; the clue is the middle item",
        kind: Kind::Json,
        nominal_bytes: 207_000,
        clue: JSON_ARRAY_CLUE,
        input: s.into_bytes(),
    }
}
