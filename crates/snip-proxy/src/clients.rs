//! How each client is pointed at the proxy when `snip wrap` runs it: the settings a
//! host reads, built from the proxy's base URL (`http://127.0.0.1:PORT`). Claude Code
//! needs only `ANTHROPIC_BASE_URL`; Codex and OpenCode take these.

/// Codex `-c` overrides: a provider whose `base_url` is the proxy (Codex appends
/// `/responses` to it), selected as the model provider.
pub fn codex_overrides(base: &str) -> Vec<String> {
    vec![
        format!(
            "-c=model_providers.snip-proxy={{ name = \"snip proxy\", base_url = \"{base}/v1\", wire_api = \"responses\", env_key = \"OPENAI_API_KEY\" }}"
        ),
        "-c=model_provider=\"snip-proxy\"".to_string(),
    ]
}

/// `OPENCODE_CONFIG_CONTENT` with the anthropic and openai providers' `baseURL` set
/// to the proxy (the SDKs append the path after `/v1`), merged into `existing` when
/// that is a JSON object.
pub fn opencode_config(existing: Option<&str>, base: &str) -> String {
    let mut cfg = existing
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}));
    for provider in ["anthropic", "openai"] {
        let url = serde_json::Value::String(format!("{base}/v1"));
        let root = cfg.as_object_mut().expect("an object");
        let providers = root
            .entry("provider")
            .or_insert_with(|| serde_json::json!({}));
        if !providers.is_object() {
            *providers = serde_json::json!({});
        }
        let p = providers
            .as_object_mut()
            .expect("an object")
            .entry(provider)
            .or_insert_with(|| serde_json::json!({}));
        if !p.is_object() {
            *p = serde_json::json!({});
        }
        let opts = p
            .as_object_mut()
            .expect("an object")
            .entry("options")
            .or_insert_with(|| serde_json::json!({}));
        if !opts.is_object() {
            *opts = serde_json::json!({});
        }
        opts.as_object_mut()
            .expect("an object")
            .insert("baseURL".into(), url);
    }
    cfg.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencode_config_merges_into_an_existing_object() {
        let out = opencode_config(
            Some(r#"{"model":"x","provider":{"openai":{"name":"o"}}}"#),
            "http://127.0.0.1:9",
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["model"], "x");
        assert_eq!(v["provider"]["openai"]["name"], "o");
        assert_eq!(
            v["provider"]["openai"]["options"]["baseURL"],
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(
            v["provider"]["anthropic"]["options"]["baseURL"],
            "http://127.0.0.1:9/v1"
        );
    }

    #[test]
    fn codex_selects_a_provider_at_the_proxy() {
        let o = codex_overrides("http://127.0.0.1:9");
        assert!(
            o[0].contains("base_url = \"http://127.0.0.1:9/v1\""),
            "{o:?}"
        );
        assert_eq!(o[1], "-c=model_provider=\"snip-proxy\"");
    }
}
