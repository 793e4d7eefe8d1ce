//! Long tool outputs for the held-out half: a service log, a test run or a query plan of
//! 5–11 KB made of plausible noise lines about the project, with one fact line buried between
//! 35 % and 65 % of the way down — past the first 512 tokens a single vector of the message
//! would cover, and far from the start a snippet cut from the beginning would show.

use super::sessions::{Rng, Vocab};

/// What kind of output a command printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Timestamped application log lines.
    Log,
    /// A test runner's per-test lines and summaries.
    Test,
    /// A PostgreSQL `EXPLAIN ANALYZE` plan.
    Explain,
}

impl Style {
    /// The style named in the data file.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "log" => Some(Style::Log),
            "test" => Some(Style::Test),
            "explain" => Some(Style::Explain),
            _ => None,
        }
    }
}

const LOG_LINES: &[&str] = &[
    "INFO  {lib}: request req_{hex} {verb} /api/{noun}s/{n} completed in {ms} ms",
    "DEBUG {func}: processed batch {n} ({m} items, {ms} ms)",
    "INFO  {func} finished for tenant t_{n}",
    "WARN  {func}: slow call to {lib} took {ms} ms (threshold 500 ms)",
    "INFO  health check ok: pool active={m} idle={k}",
    "DEBUG cache hit ratio {pct}% for {file}",
    "INFO  retrying {func} (attempt {m} of 5)",
    "ERROR {func}: transient error from {lib}, will retry in {m}s",
    "INFO  gc pause {ms} ms, heap {n} MB",
    "DEBUG {lib} connection established to {noun}-{m}.internal:{port}",
    "INFO  scheduled {func} every {m} minutes",
    "WARN  {file}: deprecated setting {noun}_timeout, use {noun}.timeout",
    "INFO  {noun} queue depth {k}, consumers {m}",
    "DEBUG span {hex} {func} took {ms} ms",
];

const TEST_LINES: &[&str] = &[
    "test {noun}::{func}_handles_{noun2} ... ok",
    "PASSED {file}::test_{func}_{n}",
    "  ✓ {func} rejects an empty {noun} ({ms} ms)",
    "[info] - should {verb} the {noun} when the {noun2} is missing",
    "ok   {noun}/{noun2} {m}.{k}s",
    "  ✓ {func} keeps {noun2} order ({ms} ms)",
    "test {noun}::{func}_is_idempotent ... ok",
    "PASSED {file}::test_{noun}_{noun2}_roundtrip",
    "Running {file} ({n} tests)",
    "[info] {func}Spec: {n} tests, 0 failures",
    "test {noun}::{func}_{noun2}_limits ... ignored",
    "  ✓ {verb}s {noun} with {lib} ({ms} ms)",
];

const EXPLAIN_LINES: &[&str] = &[
    "->  Index Scan using {noun}_{noun2}_idx on {noun}s  (cost=0.29..8.31 rows={m} width={k}) (actual time=0.0{m}..0.{ms} rows={k} loops=1)",
    "      Index Cond: ({noun}_id = {n})",
    "      Buffers: shared hit={n} read={m}",
    "->  Hash Join  (cost={m}.00..{n}.75 rows={k} width={ms}) (actual time={m}.1..{ms}.4 rows={k} loops=1)",
    "      Hash Cond: ({noun}s.{noun2}_id = {noun2}s.id)",
    "->  Bitmap Heap Scan on {noun2}s  (cost=4.{m}..{n}.10 rows={k} width=32)",
    "      Recheck Cond: (created_at > now() - '{m} days'::interval)",
    "->  Sort  (cost={n}.1..{n}.9 rows={k} width={m}) (actual time={ms}.0..{ms}.2 rows={k} loops=1)",
    "      Sort Key: {noun}s.created_at DESC",
    "      Sort Method: quicksort  Memory: {m}kB",
    "->  Memoize  (cost=0.30..{m}.02 rows=1 width={k}) (actual time=0.00{m}..0.00{k} rows=1 loops={n})",
    "Planning Time: 0.{ms} ms",
];

const NOUNS: &[&str] = &[
    "order", "tenant", "batch", "report", "session", "token", "upload", "invoice", "schedule",
    "account", "event", "record", "device", "message", "export", "snapshot",
];
const VERBS: &[&str] = &[
    "load", "store", "merge", "refresh", "render", "validate", "archive", "sync",
];

/// Fills one noise line of `template` from the project's words and random values.
fn fill(template: &str, vocab: &Vocab, rng: &mut Rng) -> String {
    let mut line = template.to_string();
    let pairs: [(&str, String); 13] = [
        ("{lib}", rng.pick(&vocab.libs).clone()),
        ("{func}", rng.pick(&vocab.funcs).clone()),
        ("{file}", rng.pick(&vocab.files).clone()),
        ("{noun2}", (*rng.pick(NOUNS)).to_string()),
        ("{noun}", (*rng.pick(NOUNS)).to_string()),
        ("{verb}", (*rng.pick(VERBS)).to_string()),
        ("{hex}", format!("{:08x}", rng.next_u64() & 0xffff_ffff)),
        ("{port}", (5000 + rng.below(4000)).to_string()),
        ("{pct}", (50 + rng.below(50)).to_string()),
        ("{ms}", (1 + rng.below(900)).to_string()),
        ("{n}", (10 + rng.below(9000)).to_string()),
        ("{m}", (1 + rng.below(9)).to_string()),
        ("{k}", (1 + rng.below(60)).to_string()),
    ];
    for (placeholder, value) in pairs {
        line = line.replace(placeholder, &value);
    }
    line
}

/// An output of `style` for the project of `vocab`, holding `fact` as one of its lines, placed
/// between 35 % and 65 % of the way down.
pub fn generate(style: Style, fact: &str, vocab: &Vocab, start_ms: u64, rng: &mut Rng) -> String {
    let templates: &[&str] = match style {
        Style::Log => LOG_LINES,
        Style::Test => TEST_LINES,
        Style::Explain => EXPLAIN_LINES,
    };
    let target = 5_000 + rng.below(6_000);
    let fact_at = target * (35 + rng.below(31)) / 100;
    let mut clock = start_ms;
    let mut lines: Vec<String> = Vec::new();
    let mut length = 0;
    let mut placed = false;
    while length < target || !placed {
        let body = if !placed && length >= fact_at {
            placed = true;
            fact.to_string()
        } else {
            let template = *rng.pick(templates);
            fill(template, vocab, rng)
        };
        let line = match style {
            Style::Log => format!("{} {body}", timestamp(clock)),
            Style::Test | Style::Explain => body,
        };
        length += line.len() + 1;
        lines.push(line);
        clock += 40 + rng.below(4_000) as u64;
    }
    lines.join("\n")
}

/// `2026-05-14T18:02:11.481Z` for `ms` since the epoch (UTC).
fn timestamp(ms: u64) -> String {
    let seconds = ms / 1000;
    let days = (seconds / 86_400) as i64;
    let (year, month, day) = civil(days);
    let of_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        ms % 1000
    )
}

/// Howard Hinnant's civil_from_days.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}
