//! Owns the Server-Sent Events codec: an incremental decoder tolerant of every line-ending style
//! and chunk boundary, the canonical encoder, and the sniffing of mislabelled SSE bodies.

/// One decoded (or to be encoded) Server-Sent Event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `"\n"`.
    pub data: String,
    /// The `id:` field of this event, if any.
    pub id: Option<String>,
    /// The `retry:` field, if any.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// An event with a name and data.
    pub fn new(event: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            event: Some(event.into()),
            data: data.into(),
            ..Self::default()
        }
    }

    /// An unnamed event carrying only data.
    pub fn data(data: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            ..Self::default()
        }
    }

    /// Canonical text of the event, ending with the blank line; multi-line data becomes several
    /// `data:` lines.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(self.data.len() + 32);
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push('\n');
        }
        if let Some(id) = &self.id {
            out.push_str("id: ");
            out.push_str(id);
            out.push('\n');
        }
        if let Some(retry) = self.retry {
            out.push_str(&format!("retry: {retry}\n"));
        }
        let normalised;
        let data = if self.data.contains('\r') {
            normalised = self.data.replace("\r\n", "\n").replace('\r', "\n");
            normalised.as_str()
        } else {
            self.data.as_str()
        };
        for line in data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Incremental SSE decoder: feed it arbitrary chunks, get complete events back.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    skip_lf: bool,
    past_first_line: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<u64>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk; returns every event completed by it.
    ///
    /// Accepts `\n`, `\r\n` and `\r` line endings (also a `\r\n` split across two chunks),
    /// multi-line data (joined with `\n`), comments, fields without a colon, `data:x` and
    /// `data: x`, events split across arbitrary chunk boundaries and a UTF-8 BOM at stream start.
    /// Events with no data lines and no event name are not emitted.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = chunk;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            if let Some(event) = self.take_line() {
                out.push(event);
            }
            if rest[pos] == b'\r' {
                match rest.get(pos + 1) {
                    Some(b'\n') => rest = &rest[pos + 2..],
                    Some(_) => rest = &rest[pos + 1..],
                    None => {
                        self.skip_lf = true;
                        rest = &[];
                    }
                }
            } else {
                rest = &rest[pos + 1..];
            }
        }
        self.line.extend_from_slice(rest);
        out
    }

    /// True when no partial line or partial event is buffered (safe point to inject a keepalive).
    pub fn is_at_boundary(&self) -> bool {
        self.line.is_empty()
            && self.event.is_none()
            && !self.has_data
            && self.id.is_none()
            && self.retry.is_none()
    }

    /// Flushes a final event not terminated by a blank line (end of stream).
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.skip_lf = false;
        if !self.line.is_empty() {
            let _ = self.take_line();
        }
        self.dispatch()
    }

    /// Processes the buffered complete line; returns an event when the line was blank.
    fn take_line(&mut self) -> Option<SseEvent> {
        let mut line = std::mem::take(&mut self.line);
        if !self.past_first_line {
            self.past_first_line = true;
            if line.starts_with(BOM) {
                line.drain(..BOM.len());
            }
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            self.line = reuse(line);
            return None;
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.find(':') {
            Some(i) => {
                let value = &text[i + 1..];
                (&text[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (text.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "retry" => {
                if let Ok(retry) = value.parse::<u64>() {
                    self.retry = Some(retry);
                }
            }
            _ => {}
        }
        drop(text);
        self.line = reuse(line);
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let data = std::mem::take(&mut self.data);
        let has_data = std::mem::replace(&mut self.has_data, false);
        let id = self.id.take();
        let retry = self.retry.take();
        if !has_data && event.is_none() {
            return None;
        }
        Some(SseEvent {
            event,
            data,
            id,
            retry,
        })
    }
}

/// Keeps the line buffer's allocation for the next line.
fn reuse(mut line: Vec<u8>) -> Vec<u8> {
    line.clear();
    line
}

/// Whether a body looks like an SSE stream: after an optional BOM and whitespace it starts with
/// `data:`, `event:` or a `:` comment.
pub fn looks_like_sse(body: &[u8]) -> bool {
    let body = body.strip_prefix(BOM).unwrap_or(body);
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let body = &body[start..];
    body.starts_with(b"data:") || body.starts_with(b"event:") || body.starts_with(b":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.push(c));
        }
        out.extend(d.finish());
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            id: None,
            retry: None,
        }
    }

    const SAMPLE: &str = "\u{feff}event: message_start\r\ndata: {\"a\":1}\r\n\r\n: keepalive comment\n\nevent: ping\ndata:{}\n\ndata: line one\rdata: line two\r\rid: 7\nretry: 1500\ndata\ndata:  spaced\n\nevent: message_stop\ndata: {\"type\":\"message_stop\",\"t\":\"é\"}\n\n";

    fn sample_expected() -> Vec<SseEvent> {
        vec![
            ev(Some("message_start"), "{\"a\":1}"),
            ev(Some("ping"), "{}"),
            ev(None, "line one\nline two"),
            SseEvent {
                event: None,
                data: "\n spaced".into(),
                id: Some("7".into()),
                retry: Some(1500),
            },
            ev(
                Some("message_stop"),
                "{\"type\":\"message_stop\",\"t\":\"é\"}",
            ),
        ]
    }

    #[test]
    fn decodes_sample_in_one_chunk() {
        assert_eq!(decode_all(&[SAMPLE.as_bytes()]), sample_expected());
    }

    #[test]
    fn decodes_sample_split_at_every_offset() {
        let bytes = SAMPLE.as_bytes();
        for i in 0..=bytes.len() {
            let got = decode_all(&[&bytes[..i], &bytes[i..]]);
            assert_eq!(got, sample_expected(), "split at {i}");
        }
    }

    #[test]
    fn decodes_sample_byte_by_byte() {
        let bytes = SAMPLE.as_bytes();
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_all(&chunks), sample_expected());
    }

    #[test]
    fn line_ending_styles() {
        let cases: &[(&str, Vec<SseEvent>)] = &[
            ("data: a\n\n", vec![ev(None, "a")]),
            ("data: a\r\n\r\n", vec![ev(None, "a")]),
            ("data: a\r\r", vec![ev(None, "a")]),
            ("data: a\r\ndata: b\r\n\r\n", vec![ev(None, "a\nb")]),
            ("event: x\n\n", vec![ev(Some("x"), "")]),
            ("id: 1\n\n", vec![]),
            (": only a comment\n\n", vec![]),
            ("data\n\n", vec![ev(None, "")]),
            ("unknown: field\ndata: z\n\n", vec![ev(None, "z")]),
        ];
        for (input, expected) in cases {
            assert_eq!(&decode_all(&[input.as_bytes()]), expected, "{input:?}");
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_ending() {
        let got = decode_all(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(got, vec![ev(None, "a\nb")]);
    }

    #[test]
    fn finish_flushes_unterminated_event() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"event: e\ndata: tail").is_empty());
        assert!(!d.is_at_boundary());
        assert_eq!(d.finish(), Some(ev(Some("e"), "tail")));
        assert!(d.is_at_boundary());
        assert_eq!(d.finish(), None);
    }

    #[test]
    fn boundary_tracking() {
        let mut d = SseDecoder::new();
        assert!(d.is_at_boundary());
        d.push(b"data: x");
        assert!(!d.is_at_boundary());
        d.push(b"\n");
        assert!(!d.is_at_boundary());
        assert_eq!(d.push(b"\n").len(), 1);
        assert!(d.is_at_boundary());
    }

    #[test]
    fn bom_only_at_stream_start() {
        let got = decode_all(&[b"\xEF\xBB", b"\xBFdata: a\n\n"]);
        assert_eq!(got, vec![ev(None, "a")]);
        // A BOM later in the stream is part of the field name, so the line is ignored.
        let got = decode_all(&[b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"]);
        assert_eq!(got, vec![ev(None, "a")]);
    }

    #[test]
    fn encode_round_trips() {
        let events = vec![
            ev(Some("content_block_delta"), "{\"x\":\"y\"}"),
            ev(None, "multi\nline\n\ndata"),
            ev(None, ""),
            ev(None, " leading space"),
            SseEvent {
                event: Some("e".into()),
                data: "d".into(),
                id: Some("42".into()),
                retry: Some(10),
            },
        ];
        let text: String = events.iter().map(SseEvent::encode).collect();
        assert_eq!(decode_all(&[text.as_bytes()]), events);
        assert_eq!(ev(Some("ping"), "{}").encode(), "event: ping\ndata: {}\n\n");
        assert_eq!(ev(None, "a\r\nb").encode(), "data: a\ndata: b\n\n");
    }

    #[test]
    fn sniffs_sse_bodies() {
        for yes in [
            &b"data: {}"[..],
            b"event: x\n",
            b"  \n: comment",
            b"\xEF\xBB\xBFdata:1",
        ] {
            assert!(looks_like_sse(yes), "{yes:?}");
        }
        for no in [&b"{\"data\": 1}"[..], b"", b"  [1]", b"datum"] {
            assert!(!looks_like_sse(no), "{no:?}");
        }
    }
}
