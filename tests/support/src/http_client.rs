//! A minimal blocking HTTP/1.1 client over `std::net::TcpStream`, for tests.
//!
//! Sends one request with `Connection: close`, reads until the server closes, and
//! de-chunks the body. `complete` tells whether the body ended properly (terminal
//! chunk / full Content-Length), which is how tests detect aborted streams.

use serde_json::Value;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A fully read response.
#[derive(Clone, Debug)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// De-chunked body bytes.
    pub body: Vec<u8>,
    /// Whether the body was complete (false after an aborted connection).
    pub complete: bool,
}

/// One server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

impl SseEvent {
    /// `data` parsed as JSON (panics with a message otherwise).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {}", self.data))
    }
}

impl Response {
    /// First value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Body as (lossy) UTF-8.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Body as JSON (panics with a message otherwise).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.text()))
    }

    /// Body parsed as server-sent events.
    pub fn sse(&self) -> Vec<SseEvent> {
        parse_sse(&self.text())
    }
}

/// Parses an SSE body (complete events only: a trailing partial event is dropped).
pub fn parse_sse(text: &str) -> Vec<SseEvent> {
    let text = text.replace("\r\n", "\n");
    let mut out = Vec::new();
    let mut parts: Vec<&str> = text.split("\n\n").collect();
    // The last piece is whatever follows the final blank line: incomplete.
    parts.pop();
    for block in parts {
        let mut event = None;
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = Some(v.trim_start().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
            }
        }
        if event.is_some() || !data.is_empty() {
            out.push(SseEvent {
                event,
                data: data.join("\n"),
            });
        }
    }
    out
}

/// Sends a request to `base` (e.g. `http://127.0.0.1:1234`) and reads the whole response.
pub fn request(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Response> {
    let authority = base
        .strip_prefix("http://")
        .unwrap_or(base)
        .trim_end_matches('/');
    let mut stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => raw.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
                ) =>
            {
                break;
            }
            Err(e) => return Err(e),
        }
    }
    parse_response(&raw)
}

/// `POST` a JSON body with extra headers; panics on I/O errors.
pub fn post_json(base: &str, path: &str, headers: &[(&str, &str)], body: &Value) -> Response {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let bytes = serde_json::to_vec(body).expect("serialize request body");
    request(base, "POST", path, &all, &bytes).expect("fake upstream request failed")
}

/// `GET` with extra headers; panics on I/O errors.
pub fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    request(base, "GET", path, headers, b"").expect("fake upstream request failed")
}

fn invalid(msg: &str) -> std::io::Error {
    std::io::Error::new(ErrorKind::InvalidData, msg.to_string())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Parses a raw HTTP/1.1 response read until connection close.
pub fn parse_response(raw: &[u8]) -> std::io::Result<Response> {
    let end = find(raw, b"\r\n\r\n").ok_or_else(|| invalid("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or_else(|| invalid("empty response"))?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("bad status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &raw[end + 4..];
    let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let chunked = get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let (body, complete) = if chunked {
        dechunk(rest)
    } else if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        (rest[..len.min(rest.len())].to_vec(), rest.len() >= len)
    } else {
        (rest.to_vec(), true)
    };
    Ok(Response {
        status,
        headers,
        body,
        complete,
    })
}

/// De-chunks a chunked body; `complete` is true only if the zero-size chunk was seen.
fn dechunk(mut rest: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = find(rest, b"\r\n") else {
            return (body, false);
        };
        let size_str = String::from_utf8_lossy(&rest[..line_end]);
        let size_hex = size_str.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_hex, 16) else {
            return (body, false);
        };
        rest = &rest[line_end + 2..];
        if size == 0 {
            return (body, true);
        }
        if rest.len() < size {
            body.extend_from_slice(rest);
            return (body, false);
        }
        body.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chunked_and_sse() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\ndata:\r\n6\r\n x\n\nda\r\n0\r\n\r\n";
        let r = parse_response(raw).expect("parse");
        assert!(r.complete);
        assert_eq!(r.text(), "data: x\n\nda");
        assert_eq!(
            r.sse(),
            vec![SseEvent {
                event: None,
                data: "x".into()
            }]
        );
        let cut = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n";
        assert!(!parse_response(cut).expect("parse").complete);
    }
}
