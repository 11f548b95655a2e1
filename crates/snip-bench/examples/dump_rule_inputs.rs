//! Writes the 50 KB per-rule inputs of the throughput bench to a directory, one file
//! each, to profile one of them outside criterion:
//!
//! ```sh
//! cargo run -p snip-bench --example dump_rule_inputs -- /tmp/rule-inputs
//! valgrind --tool=callgrind target/release/examples/compress_file \
//!     /tmp/rule-inputs/terminal-render.txt 1
//! ```

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "rule-inputs".into()),
    );
    std::fs::create_dir_all(&dir)?;
    for (rule, input) in snip_bench::workloads::rule_inputs(50 * 1024) {
        let path = dir.join(format!("{rule}.txt"));
        std::fs::write(&path, &input)?;
        println!("{}\t{} bytes", path.display(), input.len());
    }
    Ok(())
}
