//! Recorded requests: every request the fake upstream receives, byte for byte.

use bytes::Bytes;

/// One request as received: method, path with query, lowercased headers, raw body bytes
/// (not decompressed).
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Path including the query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Headers in received order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Exact body bytes as received on the wire (after de-chunking, before any decoding).
    pub body: Bytes,
    /// When the whole body had arrived (wall clock, so another process can compare).
    pub received_at: std::time::SystemTime,
}

impl RecordedRequest {
    /// First value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON; panics with a descriptive message if it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "recorded {} {} body is not JSON ({e}): {:?}",
                self.method,
                self.path,
                String::from_utf8_lossy(&self.body[..self.body.len().min(200)])
            )
        })
    }

    /// The body as (lossy) UTF-8 text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lookup_is_case_insensitive() {
        let r = RecordedRequest {
            method: "POST".into(),
            path: "/x".into(),
            headers: vec![("x-api-key".into(), "k".into())],
            body: Bytes::from_static(b"{\"a\":1}"),
            received_at: std::time::SystemTime::now(),
        };
        assert_eq!(r.header("X-Api-Key"), Some("k"));
        assert_eq!(r.header("nope"), None);
        assert_eq!(r.json()["a"], 1);
    }
}
