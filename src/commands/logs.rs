//! `lore logs [-f] [-n N]`: the daemon's log (`<data dir>/lore.log`), its last lines, and with
//! `-f` every line written after them until interrupted. A log that is truncated or replaced
//! while it is followed is read again from its start.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::cli::DataDirArg;
use crate::commands::data_dir;
use crate::server;

/// How often a followed log is checked for new lines.
const FOLLOW_EVERY: Duration = Duration::from_millis(250);
/// The most of the file's end read to find the last lines.
const TAIL_WINDOW: u64 = 4 * 1024 * 1024;

/// Prints the last `lines` lines of the log, then follows it when `follow` is set.
pub fn logs(lines: usize, follow: bool, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let path = server::log_file(&data_dir(data));
    if !path.exists() {
        if !follow {
            println!(
                "no log yet at {}; the gateway writes it when it runs as a daemon (`lore start --daemon`, `lore service install`)",
                path.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("waiting for {} …", path.display());
    }
    let mut position = 0;
    if path.exists() {
        let mut file =
            File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let (text, end) = last_lines(&mut file, lines)?;
        print!("{text}");
        std::io::stdout().flush()?;
        position = end;
    }
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    loop {
        position = print_new(&path, position)?;
        std::thread::sleep(FOLLOW_EVERY);
    }
}

/// The last `count` lines of `file` and the offset of its end.
fn last_lines(file: &mut File, count: usize) -> anyhow::Result<(String, u64)> {
    let end = file.seek(SeekFrom::End(0))?;
    let start = end.saturating_sub(TAIL_WINDOW);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(end - start).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok((tail(&text, count).to_string(), end))
}

/// The last `count` lines of `text` (a final line without a newline counts).
pub(crate) fn tail(text: &str, count: usize) -> &str {
    if count == 0 {
        return "";
    }
    let trimmed = text.strip_suffix('\n').unwrap_or(text);
    match trimmed.rmatch_indices('\n').nth(count - 1) {
        Some((index, _)) => &text[index + 1..],
        None => text,
    }
}

/// Prints what was appended to the log since `position`; returns the new position.
fn print_new(path: &Path, position: u64) -> anyhow::Result<u64> {
    let Ok(mut file) = File::open(path) else {
        return Ok(0);
    };
    let len = file.metadata()?.len();
    // Truncated or replaced (a shorter file): read it again from the start.
    let from = if len < position { 0 } else { position };
    if len == from {
        return Ok(from);
    }
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.take(len - from).read_to_end(&mut bytes)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&bytes)?;
    out.flush()?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::tail;

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
        assert_eq!(tail("a\nb\n", 5), "a\nb\n");
        assert_eq!(tail("a\nb\n", 0), "");
        assert_eq!(tail("", 3), "");
    }
}
