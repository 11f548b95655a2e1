//! Calls per second on the shared store from several threads of one process (as a
//! busy proxy or MCP server makes them): each thread keeps distinct 4 KiB originals
//! and restores a page of each.
//!
//! `cargo run --release -p snip-store --example redis_throughput -- redis://127.0.0.1:6379/0 [threads] [calls]`

use snip_store::{RestoreRequest, RestoreStatus, Store, StoreOptions, StoreUrl};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("a redis:// URL");
    let threads: usize = args.next().map_or(8, |a| a.parse().expect("threads"));
    let calls: usize = args.next().map_or(500, |a| a.parse().expect("calls"));
    let mut o = StoreOptions::in_dir("/nonexistent-snip-store");
    o.url = Some(StoreUrl::parse(&url, None).expect("a store URL"));
    o.timeout = std::time::Duration::from_secs(2);
    o.connect_timeout = std::time::Duration::from_secs(1);
    let store = Store::open(&o).expect("the store");
    let run = |threads: usize| {
        let t = Instant::now();
        std::thread::scope(|s| {
            for w in 0..threads {
                let store = &store;
                s.spawn(move || {
                    for i in 0..calls {
                        let original: Vec<u8> = format!("thread {w} call {i} {:?}\n", t)
                            .repeat(4096 / 40)
                            .into_bytes();
                        let id = store.put(&original).expect("put");
                        let r = store.restore(&RestoreRequest::bytes(&id, 0, Some(512)));
                        assert_eq!(r.status, RestoreStatus::Ok, "{}", r.note);
                    }
                });
            }
        });
        let n = (threads * calls * 2) as f64;
        n / t.elapsed().as_secs_f64()
    };
    let one = run(1);
    let many = run(threads);
    println!(
        "1 thread: {one:.0} calls/s; {threads} threads: {many:.0} calls/s ({:.2}x)",
        many / one
    );
}
