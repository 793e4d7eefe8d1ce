//! A blocking HTTP/1.1 keep-alive client with per-read timestamps: small, predictable and the
//! same for the direct and the gateway measurements, so its cost cancels out of the difference.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// What one request observed.
pub struct Timing {
    /// Status code.
    pub status: u16,
    /// From writing the request to the end of the response.
    pub total: Duration,
    /// From writing the request to the first body byte.
    pub first_byte: Duration,
    /// Arrival time (since the request was written) of every SSE event boundary seen.
    pub events: Vec<Duration>,
    /// Number of reads that returned body data.
    pub reads: usize,
}

/// One keep-alive connection.
pub struct Connection {
    reader: BufReader<TcpStream>,
    host: String,
}

impl Connection {
    pub fn open(port: u16) -> std::io::Result<Connection> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Connection {
            reader: BufReader::with_capacity(1 << 16, stream),
            host: format!("127.0.0.1:{port}"),
        })
    }

    /// Sends a POST and reads the whole response.
    pub fn post(
        &mut self,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<Timing> {
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            self.host,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        let started = Instant::now();
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        let mut status = 0;
        let mut length: Option<usize> = None;
        let mut chunked = false;
        let mut line = String::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(std::io::Error::other("connection closed in headers"));
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if status == 0 {
                status = trimmed
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                continue;
            }
            let lower = trimmed.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().ok();
            } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let mut timing = Timing {
            status,
            total: Duration::ZERO,
            first_byte: Duration::ZERO,
            events: Vec::new(),
            reads: 0,
        };
        let mut tail = Vec::new();
        let mut note = |data: &[u8], timing: &mut Timing| {
            let now = started.elapsed();
            if timing.reads == 0 {
                timing.first_byte = now;
            }
            timing.reads += 1;
            tail.extend_from_slice(data);
            while let Some(position) = tail.windows(2).position(|w| w == b"\n\n") {
                timing.events.push(now);
                tail.drain(..position + 2);
            }
        };
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim(), 16).map_err(std::io::Error::other)?;
                if size == 0 {
                    line.clear();
                    self.reader.read_line(&mut line)?;
                    break;
                }
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk)?;
                note(&chunk[..size], &mut timing);
            }
        } else if let Some(length) = length {
            let mut body = vec![0; length];
            self.reader.read_exact(&mut body)?;
            note(&body, &mut timing);
        }
        timing.total = started.elapsed();
        Ok(timing)
    }
}
