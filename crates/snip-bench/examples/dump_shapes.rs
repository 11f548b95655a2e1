//! Writes the eight generated shapes to a directory, one file each, to look at them or
//! feed them to `snip` by hand:
//!
//! ```sh
//! cargo run -p snip-bench --example dump_shapes -- /tmp/shapes
//! snip < /tmp/shapes/build-log.txt
//! ```

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "shapes".into()));
    std::fs::create_dir_all(&dir)?;
    for s in snip_bench::shapes::all() {
        let path = dir.join(format!("{}.txt", s.name));
        std::fs::write(&path, &s.input)?;
        println!(
            "{}\t{} bytes\tclue: {}",
            path.display(),
            s.input.len(),
            s.clue
        );
    }
    Ok(())
}
