//! A long multi-line string in a JSON tool result keeps its error line (an island
//! between two markers), stays valid JSON, and each marker's field range is exact.

use snip_core::{compress, marker, Config, Retain, Retention};

struct Keep;
impl Retain for Keep {
    fn retain(&mut self, _: &[u8]) -> Retention {
        Retention::Retained {
            id: "sn_00112233445566778899aabb".into(),
        }
    }
}

fn num(call: &str, key: &str) -> usize {
    let at = call.find(&format!("{key}=")).unwrap() + key.len() + 1;
    call[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

#[test]
fn error_line_in_a_long_json_string_stays_visible() {
    let mut stdout = String::new();
    for i in 0..3000 {
        if i == 1500 {
            stdout.push_str("2024-05-14 ERROR migrate: duplicate key value violates unique constraint \"slug\"\n");
        }
        stdout.push_str(&format!(
            "2024-05-14 INFO GET /api/v1/items/{i} 200 {}ms\n",
            i % 97
        ));
    }
    let doc = serde_json::json!({"exit_code": 1, "stdout": stdout, "stderr": ""});
    let input = serde_json::to_vec(&doc).unwrap();
    let o = compress(&input, &Config::default(), &mut Keep);
    assert!(o.changed && o.output.len() <= Config::default().max_bytes);
    let v: serde_json::Value = serde_json::from_slice(&o.output).expect("valid JSON");
    assert_eq!(v["exit_code"], 1);
    let kept = v["stdout"].as_str().unwrap();
    assert!(kept.contains("ERROR migrate: duplicate key value violates unique constraint \"slug\""));
    // Two markers around the island; each names bytes of the decoded original string.
    let markers: Vec<_> = kept
        .split('…')
        .filter(|p| p.starts_with("[snip: "))
        .map(|p| marker::parse(p).expect("parses"))
        .collect();
    assert_eq!(markers.len(), 2, "{kept}");
    let pieces: Vec<&str> = kept
        .split('…')
        .filter(|p| !p.starts_with("[snip: "))
        .collect();
    assert_eq!(pieces.len(), 3, "head, island, tail");
    let calls: Vec<String> = markers
        .iter()
        .map(|m| m.call.clone().expect("retained"))
        .collect();
    assert!(calls.iter().all(|c| c.contains("field=\"/stdout\"")));
    let (s1, e1, s2, e2) = (
        num(&calls[0], "start"),
        num(&calls[0], "end"),
        num(&calls[1], "start"),
        num(&calls[1], "end"),
    );
    assert_eq!(pieces[0], &stdout[..s1]);
    assert_eq!(pieces[1], &stdout[e1..s2]);
    assert_eq!(pieces[2], &stdout[e2..]);
    // Idempotent.
    let again = compress(&o.output, &Config::default(), &mut Keep);
    assert!(!again.changed);
}
