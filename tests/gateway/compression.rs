//! Compressed request bodies (Codex sends zstd) are decoded before parsing and forwarding.

use std::io::Write;

use lore_test_support::FakeUpstream;
use lore_test_support::http_client::request;
use serde_json::json;

use crate::helpers::*;

fn compress(encoding: &str, data: &[u8]) -> Vec<u8> {
    match encoding {
        "gzip" => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(data).unwrap();
            encoder.finish().unwrap()
        }
        "deflate" => {
            let mut encoder =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(data).unwrap();
            encoder.finish().unwrap()
        }
        "zstd" => zstd::encode_all(data, 3).unwrap(),
        "br" => {
            let mut out = Vec::new();
            {
                let mut writer = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                writer.write_all(data).unwrap();
            }
            out
        }
        other => panic!("unknown encoding {other}"),
    }
}

#[test]
fn every_content_encoding_is_decoded() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    for (index, encoding) in ["gzip", "deflate", "zstd", "br"].iter().enumerate() {
        let body = serde_json::to_vec(&json!({"model": "gpt-5", "input": format!("compressed with {encoding}"), "stream": index % 2 == 0})).unwrap();
        let compressed = compress(encoding, &body);
        let response = request(
            &gateway.url(),
            "POST",
            "/v1/responses",
            &[
                ("content-type", "application/json"),
                ("content-encoding", encoding),
                ("authorization", "Bearer k"),
            ],
            &compressed,
        )
        .unwrap();
        assert_eq!(response.status, 200, "{encoding}: {}", response.text());
        let sent = upstream.requests().pop().unwrap();
        assert_eq!(
            sent.body, body,
            "{encoding}: the upstream gets the decoded body"
        );
        assert!(sent.header("content-encoding").is_none());
    }
    let sessions = eventually("four sessions", || {
        let sessions = gateway.sessions();
        (sessions.len() == 4 && sessions.iter().all(|s| s["messages"] == 2)).then_some(sessions)
    });
    assert_eq!(sessions.len(), 4);
}

#[test]
fn passthrough_decodes_a_compressed_body_too() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let raw = compress("gzip", br#"{"purpose": "batch"}"#);
    let response = request(
        &gateway.url(),
        "POST",
        "/v1/files",
        &[
            ("content-type", "application/json"),
            ("content-encoding", "gzip"),
            ("authorization", "Bearer k"),
        ],
        &raw,
    )
    .unwrap();
    assert_eq!(response.status, 200);
    let sent = upstream.requests().pop().unwrap();
    assert_eq!(sent.body, br#"{"purpose": "batch"}"#.to_vec());
    assert!(sent.header("content-encoding").is_none());
}
