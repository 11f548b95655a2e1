//! The `snip_restore` JSON Schema is generated from `RestoreRequest` and committed as
//! `docs/schema/snip_restore.json`: this test fails when they differ. Refresh the file
//! with `UPDATE_SCHEMA=1 cargo test -p snip-store --test schema`.

use std::path::PathBuf;

fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema/snip_restore.json")
}

#[test]
fn restore_schema_matches_the_committed_file() {
    let generated = serde_json::to_string_pretty(&snip_store::restore::schema()).unwrap() + "\n";
    let path = committed();
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        on_disk == generated,
        "{} is not the schema RestoreRequest generates; run UPDATE_SCHEMA=1 cargo test -p snip-store --test schema and commit it.\n--- generated ---\n{generated}",
        path.display()
    );
}

#[test]
fn every_request_field_is_in_the_schema_and_only_id_is_required() {
    let s = snip_store::restore::schema();
    // Every field a request serializes is a schema property, and the schema rejects
    // others (the request denies unknown fields).
    let mut full = snip_store::RestoreRequest::search("sn_x", "q");
    full.start = Some(1);
    full.end = Some(2);
    full.field = Some("/a".into());
    full.max_bytes = Some(64);
    full.context = Some(1);
    full.align = Some(snip_store::Align::Token);
    let v = serde_json::to_value(&full).unwrap();
    let props = s["properties"].as_object().unwrap();
    let fields: Vec<&String> = v.as_object().unwrap().keys().collect();
    let names: Vec<&String> = props.keys().collect();
    assert_eq!(fields, names);
    assert_eq!(s["required"], serde_json::json!(["id"]));
    assert_eq!(s["additionalProperties"], serde_json::json!(false));
    assert_eq!(s["type"], "object");
    assert!(s.get("$schema").is_none());
}
