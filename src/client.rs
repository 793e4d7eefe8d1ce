//! A minimal blocking HTTP/1.1 client for the CLI to talk to a gateway on this machine.
//!
//! The CLI only ever calls its own loopback gateway with small requests, so a few lines over
//! `TcpStream` beat starting an async runtime.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, bail};

/// Sends `GET path` to `127.0.0.1:port` and returns the status and body.
pub fn get(port: u16, path: &str) -> anyhow::Result<(u16, String)> {
    request(port, "GET", path, b"", None)
}

/// Sends an empty management `POST` (with `x-lore-request: 1`) and returns the status and body.
pub fn post(port: u16, path: &str) -> anyhow::Result<(u16, String)> {
    request(port, "POST", path, b"", None)
}

/// Sends a management `POST` with a body of the given content type.
pub fn post_body(
    port: u16,
    path: &str,
    body: &[u8],
    content_type: &str,
) -> anyhow::Result<(u16, String)> {
    request(port, "POST", path, body, Some(content_type))
}

/// Sends a management `DELETE`.
pub fn delete(port: u16, path: &str) -> anyhow::Result<(u16, String)> {
    request(port, "DELETE", path, b"", None)
}

fn request(
    port: u16,
    method: &str,
    path: &str,
    body: &[u8],
    content_type: Option<&str>,
) -> anyhow::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .with_context(|| format!("cannot connect to 127.0.0.1:{port}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let content_type = content_type
        .map(|kind| format!("Content-Type: {kind}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nAccept: application/json\r\nx-lore-request: 1\r\n{content_type}Content-Length: {}\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        bail!("malformed reply from the gateway");
    };
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .context("malformed status line from the gateway")?;
    let chunked = head.lines().any(|line| {
        line.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok((status, body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(super::dechunk("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), "abcde");
    }
}
