//! Time-bounded fuzzing of the wire parsers with proptest: the SSE decoder, the three request
//! parsers, `peek_head`, card frontmatter, `kinds.yaml` and lorebook import. Inputs are random
//! bytes, token soups built from each format's own syntax, and mutations (bytes flipped,
//! inserted, cut) of valid documents. Every input must return (a value or an error) without a
//! panic and within [`LIMIT`]. `LORE_FUZZ_CASES` sets the cases per target (256 by default, the
//! short corpus run of `scripts/test`); a long run sets it high.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use lore_proto::cards::{Kind, KindsConfig, parse_card};
use lore_proto::lorebook::import_world_info;
use lore_proto::{Protocol, SseDecoder, parse_request, peek_head};
use proptest::prelude::*;

/// Longest any one input may take.
const LIMIT: Duration = Duration::from_secs(2);

fn config() -> ProptestConfig {
    let cases = std::env::var("LORE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `f`, failing if it took longer than [`LIMIT`].
fn bounded<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    assert!(
        started.elapsed() < LIMIT,
        "{what} took {:?}",
        started.elapsed()
    );
    out
}

/// A string made of `tokens` and random short text.
fn soup(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(tokens).prop_map(str::to_string),
            1 => "[ -~]{0,8}",
            1 => any::<char>().prop_map(|c| c.to_string()),
        ],
        0..max,
    )
    .prop_map(|pieces| pieces.concat())
}

/// `seed` with a few random byte edits.
fn mutated(seed: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8).prop_map(
        move |edits| {
            let mut bytes = seed.to_vec();
            for (at, byte, op) in edits {
                if bytes.is_empty() {
                    bytes.push(byte);
                    continue;
                }
                let i = at.index(bytes.len());
                match op {
                    0 => bytes[i] = byte,
                    1 => bytes.insert(i, byte),
                    _ => {
                        bytes.truncate(i);
                    }
                }
            }
            bytes
        },
    )
}

const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1e999",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\"model\"",
    "\"messages\"",
    "\"role\"",
    "\"user\"",
    "\"assistant\"",
    "\"system\"",
    "\"tool\"",
    "\"content\"",
    "\"type\"",
    "\"text\"",
    "\"tool_use\"",
    "\"tool_result\"",
    "\"thinking\"",
    "\"input\"",
    "\"stream\"",
    "\"tools\"",
    "\"input_text\"",
    "\"function_call\"",
    "\"function_call_output\"",
    "\"tool_calls\"",
    "\"arguments\"",
    "\"id\"",
    "\"call_id\"",
    "\"previous_response_id\"",
    "\"instructions\"",
    "\"cache_control\"",
    " ",
];

const ANTHROPIC: &[u8] = br#"{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.rs"}]}]}]}"#;
const CHAT: &[u8] = br#"{"model":"gpt-4o","stream":false,"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"a.rs"}]}"#;
const RESPONSES: &[u8] = br#"{"model":"gpt-5","instructions":"be brief","previous_response_id":"resp_1","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"function_call","call_id":"c1","name":"bash","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#;

fn request_inputs(seed: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        soup(JSON_TOKENS, 80).prop_map(String::into_bytes),
        mutated(seed),
    ]
}

const SSE_TOKENS: &[&str] = &[
    "data:",
    "data: ",
    "event:",
    "event: message_start",
    "id:",
    "retry:",
    ":",
    ": ping",
    "\n",
    "\r",
    "\r\n",
    "\n\n",
    "\u{feff}",
    "{\"type\":\"content_block_delta\"}",
    "[DONE]",
    "x",
];

const YAML_TOKENS: &[&str] = &[
    "---\n",
    "\n",
    "  ",
    "- ",
    ": ",
    "title",
    "keywords",
    "kind",
    "priority",
    "match",
    "secondary",
    "[",
    "]",
    "{",
    "}",
    "'",
    "\"",
    "&a",
    "*a",
    "!!str",
    "!!binary",
    "|",
    ">",
    "#",
    "~",
    "1e9",
    "-1",
    "true",
    "null",
    "?",
    ",",
    "\t",
    "%YAML 1.2\n",
    "<<: *a\n",
];

const LOREBOOK: &str = r#"{"entries":{"0":{"uid":0,"key":["Alice","Bob"],"keysecondary":["k"],"comment":"Alice","content":"Alice leads.","constant":false,"selective":true,"selectiveLogic":3,"order":100,"position":0,"disable":false,"probability":100,"useProbability":true,"depth":4,"group":"g","extensions":{"x":1}}}}"#;

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>().prop_map(|n| serde_json::json!(n)),
        prop_oneof![
            "[ -~]{0,12}",
            prop::sample::select(&["key", "content", "uid", "selectiveLogic", "entries", "0"][..])
                .prop_map(str::to_string)
        ]
        .prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop::sample::select(
                    &[
                        "entries",
                        "key",
                        "keysecondary",
                        "content",
                        "comment",
                        "uid",
                        "selectiveLogic",
                        "constant",
                        "order",
                        "position",
                        "disable",
                        "data",
                        "character_book",
                        "name",
                        "extensions",
                        "0",
                        "1"
                    ][..]
                )
                .prop_map(str::to_string),
                inner,
                0..6
            )
            .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn request_parsers_never_panic(
        anthropic in request_inputs(ANTHROPIC),
        chat in request_inputs(CHAT),
        responses in request_inputs(RESPONSES),
    ) {
        for (protocol, body) in [
            (Protocol::Anthropic, &anthropic),
            (Protocol::OpenAiChat, &chat),
            (Protocol::OpenAiResponses, &responses),
        ] {
            bounded("parse_request", || {
                let _ = parse_request(protocol, body);
                let _ = peek_head(body);
            });
        }
    }

    #[test]
    fn the_sse_decoder_never_panics_and_chunking_does_not_change_events(
        stream in soup(SSE_TOKENS, 120),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let bytes = stream.into_bytes();
        let whole = bounded("sse decode", || {
            let mut decoder = SseDecoder::new();
            let mut events = decoder.push(&bytes);
            events.extend(decoder.finish());
            events
        });
        let mut points: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut decoder = SseDecoder::new();
        let mut split = Vec::new();
        let mut start = 0;
        for point in points.into_iter().chain([bytes.len()]) {
            split.extend(decoder.push(&bytes[start..point]));
            start = point;
        }
        split.extend(decoder.finish());
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn raw_bytes_into_the_sse_decoder(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        bounded("sse raw", || {
            let mut decoder = SseDecoder::new();
            let _ = decoder.push(&bytes);
            let _ = decoder.is_at_boundary();
            let _ = decoder.finish();
        });
    }

    #[test]
    fn card_frontmatter_never_panics(
        front in soup(YAML_TOKENS, 60),
        body in "[ -~\n#]{0,80}",
        raw in "\\PC{0,200}",
    ) {
        let config = KindsConfig::default();
        for text in [format!("---\n{front}\n---\n{body}"), format!("{front}{body}"), raw] {
            bounded("parse_card", || {
                for kind in [Kind::People, Kind::Entry] {
                    let _ = parse_card("key", kind, &text, &config);
                }
            });
        }
    }

    #[test]
    fn kinds_yaml_never_panics(text in soup(YAML_TOKENS, 80)) {
        bounded("kinds.yaml", || {
            let _ = KindsConfig::parse(&text);
        });
    }

    #[test]
    fn lorebook_import_never_panics(
        value in json_value(),
        bytes in mutated(LOREBOOK.as_bytes()),
    ) {
        bounded("lorebook import", || {
            let _ = import_world_info(&value);
            if let Ok(parsed) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                let _ = import_world_info(&parsed);
            }
        });
    }
}
