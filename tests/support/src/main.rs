//! `lore-fake-upstream`: the fake LLM upstream as a standalone process (benchmarks,
//! Python SDK end-to-end tests).
//!
//! ```text
//! lore-fake-upstream [--port N] [--host 127.0.0.1] [--event-interval-ms N]
//!                    [--stream-events N] [--text T] [--workers N] [--context-limit MODEL=TOKENS]…
//! ```
//! Prints exactly one line `listening on http://HOST:PORT` to stdout, then serves the
//! default reply (no scripts, no request recording) until killed.

use lore_test_support::{BinaryOptions, serve_forever};
use std::io::Write;
use std::time::Duration;

const USAGE: &str = "usage: lore-fake-upstream [--port N] [--host 127.0.0.1] [--event-interval-ms N] \
[--stream-events N] [--text T] [--workers N] [--context-limit MODEL=TOKENS]";

fn parse_args(args: impl IntoIterator<Item = String>) -> anyhow::Result<BinaryOptions> {
    let mut opts = BinaryOptions::default();
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (flag.clone(), None),
        };
        let mut value = || -> anyhow::Result<String> {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| anyhow::anyhow!("{name} needs a value\n{USAGE}"))
        };
        match name.as_str() {
            "--port" => opts.serve.port = value()?.parse()?,
            "--host" => opts.serve.host = value()?,
            "--event-interval-ms" => {
                opts.event_interval = Duration::from_millis(value()?.parse()?);
            }
            "--stream-events" => opts.stream_events = Some(value()?.parse()?),
            "--text" => opts.text = Some(value()?),
            "--workers" => opts.serve.workers = value()?.parse()?,
            "--context-limit" => opts.context_limits.push(
                lore_test_support::parse_context_limit(&value()?).map_err(anyhow::Error::msg)?,
            ),
            other => anyhow::bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    opts.serve.signals = true;
    Ok(opts)
}

fn main() -> anyhow::Result<()> {
    let opts = parse_args(std::env::args().skip(1))?;
    let host = opts.serve.host.clone();
    serve_forever(opts, |addr| {
        let mut out = std::io::stdout().lock();
        // Nothing sensible to do if stdout is gone; the server keeps running.
        let _ = writeln!(out, "listening on http://{host}:{}", addr.port());
        let _ = out.flush();
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_all_flags() {
        let o = parse_args(args(
            "--port 9 --host 0.0.0.0 --event-interval-ms 20 --stream-events=64 --text hi --workers 2",
        ))
        .expect("parse");
        assert_eq!(o.serve.port, 9);
        assert_eq!(o.serve.host, "0.0.0.0");
        assert_eq!(o.event_interval, Duration::from_millis(20));
        assert_eq!(o.stream_events, Some(64));
        assert_eq!(o.text.as_deref(), Some("hi"));
        assert_eq!(o.serve.workers, 2);
        assert!(parse_args(args("--bogus")).is_err());
        assert!(parse_args(args("--port")).is_err());
    }
}
