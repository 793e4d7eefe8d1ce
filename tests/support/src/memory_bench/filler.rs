//! The filler of the synthetic session: a tiny deterministic generator ([`Lcg`]) and the tool
//! outputs a coding agent sees most: file contents, edit confirmations, short and long build
//! logs, test runs with failures and backtraces ([`super::logs`] has the rest).
//!
//! Nothing here states one of the planted facts: every string is built from the word lists
//! below, which hold none of the answer keys (the generator's test checks it).

/// A 64-bit linear congruential generator (Knuth's MMIX constants): enough variety for filler,
/// fully deterministic for a fixed seed.
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Lcg(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// A number in `low..=high`.
    pub fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high.saturating_sub(low) + 1)
    }

    /// One item of a non-empty slice.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items.get(self.below(items.len())).copied().unwrap_or("")
    }

    /// Lowercase hex of `len` digits, drawn without the digit 5 so no planted number can hide
    /// in a hash.
    pub fn hex(&mut self, len: usize) -> String {
        const DIGITS: &[u8] = b"0123467890abcdef";
        (0..len)
            .map(|_| DIGITS[self.below(DIGITS.len())] as char)
            .collect()
    }
}

#[rustfmt::skip]
const DEPENDENCIES: &[&str] = &[
    "serde",
    "serde_json",
    "tokio",
    "hyper",
    "tower",
    "axum",
    "tracing",
    "tracing-subscriber",
    "chrono",
    "uuid",
    "sqlx-core",
    "sqlx-postgres",
    "futures-util",
    "bytes",
    "http",
    "regex",
    "once_cell",
    "thiserror",
    "anyhow",
    "clap",
    "rand",
    "parking_lot",
    "smallvec",
    "itoa",
    "ryu",
    "memchr",
    "libc",
    "proc-macro2",
    "quote",
    "syn",
    "unicode-ident",
    "pin-project-lite",
    "mio",
    "socket2",
    "h2",
    "indexmap",
    "hashbrown",
    "base64",
    "percent-encoding",
    "url",
    "time",
    "num-traits",
    "crossbeam-utils",
    "slab",
    "lock_api",
    "scopeguard",
    "cfg-if",
    "getrandom",
    "ahash",
    "tower-http",
    "mime",
    "httparse",
    "form_urlencoded",
    "tinyvec",
    "either",
    "sha2",
    "digest",
    "hmac",
    "md-5",
    "stringprep",
    "whoami",
    "dotenvy",
    "hex",
    "atoi",
    "crc",
];

const WARNINGS: &[&str] = &[
    "unused variable: `ctx`",
    "unused import: `std::collections::HashMap`",
    "field `created_by` is never read",
    "variable does not need to be mutable",
    "unnecessary parentheses around `if` condition",
    "function `legacy_total` is never used",
];

const COMPILE_ERRORS: &[(&str, &str)] = &[
    (
        "E0308",
        "mismatched types: expected `Amount`, found `&Amount`",
    ),
    (
        "E0599",
        "no method named `checked_sub` found for struct `Money` in the current scope",
    ),
    ("E0382", "borrow of moved value: `entries`"),
    ("E0433", "failed to resolve: use of undeclared type `Utc`"),
    (
        "E0061",
        "this function takes 3 arguments but 2 arguments were supplied",
    ),
];

/// The context of one task: its crate, files and test names.
#[derive(Debug, Clone, Copy)]
pub struct TaskFiles {
    /// The crate the task works on.
    pub krate: &'static str,
    /// Files the task reads and edits.
    pub files: &'static [&'static str],
    /// Unit-test names of the crate.
    pub tests: &'static [&'static str],
    /// Symbols the task greps for.
    pub symbols: &'static [&'static str],
}

impl TaskFiles {
    /// File `i` (wrapping).
    pub fn file(&self, i: usize) -> &'static str {
        self.files[i % self.files.len()]
    }
}

/// The contents of a file, as `read_file` returns them (20–60 lines, under 4,000 chars).
pub fn file_contents(path: &str, task: &TaskFiles, rng: &mut Lcg) -> String {
    let lines = rng.range(20, 48);
    let mut out = String::new();
    let ext = path.rsplit('.').next().unwrap_or("");
    for n in 1..=lines {
        let symbol = rng.pick(task.symbols);
        let line = match ext {
            "py" => match rng.below(6) {
                0 => format!("def {}(self, entry, *, strict=True):", word(rng)),
                1 => format!("    if entry.amount < 0 and strict:  # {}", word(rng)),
                2 => format!("        raise LedgerError(\"{} rejected\")", word(rng)),
                3 => format!("    return self._{}(entry)", word(rng)),
                4 => format!("# see {symbol}"),
                _ => String::new(),
            },
            "sql" => match rng.below(4) {
                0 => format!(
                    "CREATE INDEX IF NOT EXISTS idx_{0} ON invoices ({0});",
                    word(rng)
                ),
                1 => format!("ALTER TABLE invoices ADD COLUMN {} text;", word(rng)),
                2 => "-- reviewed by the data team".to_string(),
                _ => String::new(),
            },
            "sh" => match rng.below(4) {
                0 => format!("log \"{} step done\"", word(rng)),
                1 => format!(
                    "{}=\"${{{}:-}}\"",
                    word(rng).to_uppercase(),
                    word(rng).to_uppercase()
                ),
                2 => "set -euo pipefail".to_string(),
                _ => String::new(),
            },
            "toml" | "yml" | "yaml" | "md" | "js" | "justfile" => match rng.below(4) {
                0 => format!("{} = \"{}\"", word(rng), word(rng)),
                1 => format!("  - name: {} {}", word(rng), word(rng)),
                2 => format!("# {} {}", word(rng), word(rng)),
                _ => String::new(),
            },
            _ => match rng.below(7) {
                0 => format!(
                    "pub fn {}(&self, entry: &Entry) -> Result<Amount, Error> {{",
                    word(rng)
                ),
                1 => format!("    let {} = self.{}(entry)?;", word(rng), word(rng)),
                2 => format!("    // {symbol}: keep in step with the caller"),
                3 => format!(
                    "    if {}.is_zero() {{ return Ok(Amount::ZERO); }}",
                    word(rng)
                ),
                4 => "}".to_string(),
                5 => format!("use crate::{}::{};", word(rng), word(rng)),
                _ => String::new(),
            },
        };
        out.push_str(&format!("{n:>4}  {line}\n"));
    }
    out
}

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "total", "entry", "entries", "account", "amount", "period", "refund", "balance", "ledger",
    "journal", "posting", "reverse", "lease", "holder", "renewal", "deadline", "invoice",
    "customer", "tenant", "region", "rollout", "image", "manifest", "probe", "index", "cache",
    "lookup", "listing", "cursor", "page", "batch", "replica", "lag", "pipeline", "artifact",
    "runner", "matrix", "lint", "format", "digest", "owner", "status", "retry", "budget",
];

/// A word of the filler vocabulary.
pub fn word(rng: &mut Lcg) -> &'static str {
    rng.pick(WORDS)
}

/// What the edit tool answers.
pub fn edit_result(path: &str, rng: &mut Lcg) -> String {
    format!(
        "Applied {} edit(s) to {path}: +{} -{} lines",
        rng.range(1, 3),
        rng.range(1, 40),
        rng.range(0, 25)
    )
}

/// A short, successful build.
pub fn build_ok(task: &TaskFiles, rng: &mut Lcg) -> String {
    format!(
        "   Compiling {0} v0.{1}.0 (/work/demo/billing/crates/{0})\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in {2}.{3}s",
        task.krate,
        rng.range(1, 9),
        rng.range(2, 40),
        rng.below(10)
    )
}

/// A long build log (over 4,000 chars): a hundred dependencies compiling, a few warnings with
/// their locations, and, when `fail`, a compile error.
pub fn build_log(task: &TaskFiles, rng: &mut Lcg, fail: bool) -> String {
    let mut out = String::new();
    for dep in DEPENDENCIES
        .iter()
        .skip(rng.below(20))
        .take(rng.range(30, 45))
    {
        out.push_str(&format!(
            "  Downloaded {dep} v{}.{}.{}\n",
            rng.below(2),
            rng.range(1, 40),
            rng.below(20)
        ));
    }
    for dep in DEPENDENCIES
        .iter()
        .cycle()
        .skip(rng.below(DEPENDENCIES.len()))
        .take(DEPENDENCIES.len() - rng.below(8))
    {
        out.push_str(&format!(
            "   Compiling {dep} v{}.{}.{}\n",
            rng.below(2),
            rng.range(1, 40),
            rng.below(20)
        ));
    }
    for _ in 0..rng.range(4, 7) {
        let line = rng.range(10, 400);
        out.push_str(&format!(
            "warning: {}\n  --> {}:{line}:{}\n    |\n{line:>3} |     let {} = self.{}(entry)?;\n    |         ^^^^ help: if this is intentional, prefix it with an underscore\n    |\n    = note: `#[warn(unused_variables)]` on by default\n\n",
            rng.pick(WARNINGS),
            task.file(rng.below(8)),
            rng.range(5, 30),
            word(rng),
            word(rng)
        ));
    }
    out.push_str(&format!(
        "   Compiling {} v0.3.0 (/work/demo/billing/crates/{})\n",
        task.krate, task.krate
    ));
    if fail {
        let (code, message) = COMPILE_ERRORS[rng.below(COMPILE_ERRORS.len())];
        out.push_str(&format!(
            "error[{code}]: {message}\n  --> {}:{}:{}\n   |\n   = note: see the function signature above\n\nerror: could not compile `{}` (lib) due to 1 previous error; {} warnings emitted\n",
            task.file(rng.below(8)),
            rng.range(10, 400),
            rng.range(5, 30),
            task.krate,
            rng.range(2, 4)
        ));
    } else {
        out.push_str(&format!(
            "    Finished `dev` profile [unoptimized + debuginfo] target(s) in {}.{}s\n",
            rng.range(30, 99),
            rng.below(10)
        ));
    }
    out
}
