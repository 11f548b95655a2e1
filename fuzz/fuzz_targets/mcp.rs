//! MCP requests answered by snip's MCP server (`snip mcp`): one line of input, read as
//! the server's transport reads a line (a JSON-RPC client message, rmcp's own type);
//! a line that is not one is taken as the `arguments` of a `snip_restore` call.
//! `sn_ID` in the input is replaced by the id of an original in the server's store.
//!
//! Invariants: no panic; a `tools/call` gets a result or a JSON-RPC error, and the
//! reply serializes as a JSON-RPC response; a `snip_restore` result carries the
//! store's response (a known status, `isError` exactly when it is `invalid`), and an
//! `ok` answer's content is a slice of the original.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, NumberOrString,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde_json::Value;
use snip_hosts::mcp_server::SnipServer;
use std::sync::OnceLock;

const ORIGINAL: &[u8] = b"{\"a\": [\"x\", \"line\\nline\\n\"]}\nsecond line\nthird \xce\xbb line\n";

/// The server's store (`SNIP_STORE_DIR`, set before its first call), holding
/// [`ORIGINAL`] under the returned id.
fn env() -> &'static (tempfile::TempDir, String) {
    static E: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();
    E.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        std::env::set_var("SNIP_STORE_DIR", dir.path().join("store"));
        for k in ["SNIP_STORE", "SNIP_STORE_URL"] {
            std::env::remove_var(k);
        }
        let id = snip_store::open_from_env()
            .store()
            .expect("a store")
            .put(ORIGINAL)
            .expect("put");
        (dir, id)
    })
}

fn call(id: RequestId, params: CallToolRequestParams) {
    let name = params.name.to_string();
    let args = params.arguments.clone();
    let result = SnipServer.call(&name, args);
    let reply: ServerJsonRpcMessage = match result {
        Ok(r) => {
            if name == snip_hosts::mcp_server::RESTORE_TOOL {
                let resp = r
                    .structured_content
                    .as_ref()
                    .expect("a structured response");
                let status = resp["status"].as_str().expect("a status");
                assert!(
                    [
                        "ok",
                        "not_found",
                        "expired",
                        "too_large",
                        "invalid",
                        "unavailable",
                        "error"
                    ]
                    .contains(&status),
                    "unknown status {status}"
                );
                assert_eq!(r.is_error, Some(status == "invalid"), "{resp}");
                if status == "ok" {
                    let content = match (resp.get("content"), resp.get("content_base64")) {
                        (Some(Value::String(s)), _)
                            if resp.get("field").is_none_or(Value::is_null) =>
                        {
                            Some(s.clone().into_bytes())
                        }
                        _ => None,
                    };
                    if let (Some(c), Some("bytes" | "full")) = (content, resp["mode"].as_str()) {
                        let start = resp["start"].as_u64().expect("start") as usize;
                        assert_eq!(
                            ORIGINAL.get(start..start + c.len()),
                            Some(c.as_slice()),
                            "an ok page that is not the original's bytes: {resp}"
                        );
                    }
                }
            }
            ServerJsonRpcMessage::response(ServerResult::CallToolResult(r), id)
        }
        Err(e) => ServerJsonRpcMessage::error(e, Some(id)),
    };
    serde_json::to_string(&reply).expect("a reply serializes");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (_, id) = env();
    let line = text.replace("sn_ID", id);
    match serde_json::from_str::<ClientJsonRpcMessage>(&line) {
        Ok(JsonRpcMessage::Request(r)) => {
            if let ClientRequest::CallToolRequest(c) = r.request {
                call(r.id, c.params);
            }
        }
        Ok(_) => {}
        Err(_) => {
            // As the arguments of a snip_restore call.
            let Ok(Value::Object(args)) = serde_json::from_str::<Value>(&line) else {
                return;
            };
            let mut params = CallToolRequestParams::new(snip_hosts::mcp_server::RESTORE_TOOL);
            params.arguments = Some(args);
            call(NumberOrString::Number(1), params);
        }
    }
});
