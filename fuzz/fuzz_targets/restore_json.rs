//! A restore request as JSON (the MCP tool's arguments and the Python binding's
//! input, `StoreHandle::restore_json`) answered from a real store: no panic, and the
//! answer always serializes to JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn store() -> &'static (snip_testkit::TempStore, String) {
    static S: OnceLock<(snip_testkit::TempStore, String)> = OnceLock::new();
    S.get_or_init(|| {
        let t = snip_testkit::TempStore::new();
        let id = t
            .handle
            .store()
            .expect("open")
            .put(b"{\"a\": [\"x\", \"line\\nline\\n\"]}\nsecond line\n")
            .expect("put");
        (t, id)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (t, id) = store();
    for json in [text.to_string(), text.replace("sn_ID", id)] {
        let resp = t.handle.restore_json(&json);
        serde_json::to_string(&resp).expect("a response serializes");
    }
});
