//! Short and long outputs of the commands around the code: test runs (green, or failing with a
//! backtrace), grep hits, diffs, commits, `perf` profiles, CI logs, and the one-liners of
//! migrations, rollouts, load tests, shellcheck…
//!
//! Like [`super::filler`], built only from word lists that hold none of the answer keys.

use super::filler::{Lcg, TaskFiles, word};

const PANICS: &[&str] = &[
    "assertion `left == right` failed\n  left: 3\n right: 2",
    "called `Option::unwrap()` on a `None` value",
    "index out of bounds: the len is 4 but the index is 4",
    "assertion failed: total.is_zero()",
];

/// A short, green test run.
pub fn test_ok(task: &TaskFiles, rng: &mut Lcg) -> String {
    let n = rng.range(8, 60);
    let mut out = format!("running {n} tests\n");
    for _ in 0..rng.range(3, 8) {
        out.push_str(&format!("test {} ... ok\n", rng.pick(task.tests)));
    }
    out.push_str(&format!(
        "...\ntest result: ok. {n} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {}.{}s",
        rng.below(4),
        rng.range(10, 99)
    ));
    out
}

/// A long test run (over 4,000 chars) in which `failing` fails with `panic`, followed by a
/// backtrace through the task's files; `extra` lines are printed in the test's captured output.
pub fn test_log(
    task: &TaskFiles,
    rng: &mut Lcg,
    failing: &str,
    panic: Option<&str>,
    extra: &[String],
) -> String {
    let n = rng.range(85, 110);
    let mut out = format!(
        "    Finished `test` profile [unoptimized + debuginfo] target(s) in {}.{}s\n     Running unittests src/lib.rs (target/debug/deps/{}-{})\n\nrunning {n} tests\n",
        rng.range(5, 60),
        rng.below(10),
        task.krate.replace('-', "_"),
        rng.hex(16)
    );
    let fail_at = rng.range(n / 3, n - 5);
    for i in 0..n {
        if i == fail_at {
            out.push_str(&format!("test {failing} ... FAILED\n"));
        } else {
            out.push_str(&format!(
                "test {}::{} ... ok\n",
                rng.pick(task.tests),
                rng.below(90)
            ));
        }
    }
    out.push_str(&format!("\nfailures:\n\n---- {failing} stdout ----\n"));
    for line in extra {
        out.push_str(line);
        out.push('\n');
    }
    let panic = panic.map_or_else(
        || {
            format!(
                "thread '{failing}' panicked at {}:{}:{}:\n{}",
                task.file(rng.below(8)),
                rng.range(10, 400),
                rng.range(5, 30),
                PANICS[rng.below(PANICS.len())]
            )
        },
        str::to_string,
    );
    out.push_str(&panic);
    out.push_str("\nstack backtrace:\n");
    for frame in 0..rng.range(12, 18) {
        out.push_str(&format!(
            "  {frame:>2}: {}::{}\n             at ./{}:{}:{}\n",
            task.krate.replace('-', "_"),
            word(rng),
            task.file(rng.below(8)),
            rng.range(10, 400),
            rng.range(5, 30)
        ));
    }
    out.push_str(&format!(
        "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n\nfailures:\n    {failing}\n\ntest result: FAILED. {} passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in {}.{}s\n\nerror: test failed, to rerun pass `-p {} --lib`",
        n - 1,
        rng.below(9),
        rng.range(10, 99),
        task.krate
    ));
    out
}

/// `rg -n` hits of `pattern` in the task's files.
pub fn grep_hits(task: &TaskFiles, pattern: &str, rng: &mut Lcg) -> String {
    let mut out = String::new();
    for _ in 0..rng.range(2, 7) {
        out.push_str(&format!(
            "{}:{}:    {} {}({})\n",
            task.file(rng.below(8)),
            rng.range(10, 400),
            word(rng),
            pattern,
            word(rng)
        ));
    }
    out
}

/// `git diff --stat`.
pub fn diff_stat(task: &TaskFiles, rng: &mut Lcg) -> String {
    let files = rng.range(2, 5);
    let mut out = String::new();
    let (mut plus, mut minus) = (0, 0);
    for i in 0..files {
        let (p, m) = (rng.range(1, 90), rng.range(0, 40));
        plus += p;
        minus += m;
        out.push_str(&format!(
            " {:<44} | {:>3} {}\n",
            task.file(i),
            p + m,
            "+".repeat(p.min(30) / 3)
        ));
    }
    out.push_str(&format!(
        " {files} files changed, {plus} insertions(+), {minus} deletions(-)"
    ));
    out
}

/// `git commit` (and push) output.
pub fn commit(task: &TaskFiles, rng: &mut Lcg) -> String {
    format!(
        "[{} {}] {}: {} {}\n {} files changed, {} insertions(+), {} deletions(-)",
        task.krate,
        rng.hex(7),
        task.krate,
        word(rng),
        word(rng),
        rng.range(2, 7),
        rng.range(10, 300),
        rng.range(0, 90)
    )
}

/// A long profile (over 4,000 chars): `perf report` lines, the hottest first. `top` is the
/// line to print first, if any.
pub fn perf_report(rng: &mut Lcg, top: Option<&str>) -> String {
    let mut out = String::from(
        "# Samples: 48K of event 'cycles:P'\n# Event count (approx.): 39218841102\n#\n# Overhead  Command      Shared Object        Symbol\n# ........  ...........  ...................  ......................................\n#\n",
    );
    if let Some(top) = top {
        out.push_str(top);
        out.push('\n');
    }
    let mut share = 9.0_f64;
    for _ in 0..rng.range(75, 95) {
        out.push_str(&format!(
            "  {share:>6.2}%  billing-api  {:<19}  [.] {}::{}::{}\n",
            rng.pick(&["billing-api", "libc.so.6", "[kernel.kallsyms]"]),
            rng.pick(&["api", "ledger", "hyper", "tokio", "serde_json"]),
            word(rng),
            word(rng)
        ));
        share *= 0.93;
    }
    out
}

/// A long CI log (over 4,000 chars) of one workflow run; `failure` lines end it when given.
pub fn ci_log(rng: &mut Lcg, failure: &[String]) -> String {
    let mut out = String::new();
    let mut minute = 0;
    for step in [
        "Set up job",
        "Checkout",
        "Restore cache",
        "Install toolchain",
        "Build",
        "Test",
        "Lint",
        "Licence check",
    ] {
        for _ in 0..rng.range(10, 16) {
            minute += rng.below(2);
            out.push_str(&format!(
                "2026-11-0{}T10:{:02}:{:02}Z [{step}] {} {} {}\n",
                rng.range(1, 9),
                minute % 60,
                rng.below(60),
                word(rng),
                word(rng),
                rng.pick(&["ok", "done", "cached", "skipped", "downloaded"])
            ));
        }
    }
    for line in failure {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(if failure.is_empty() {
        "Job succeeded"
    } else {
        "Error: Process completed with exit code 1."
    });
    out
}

/// A short output of a named command: rollout status, shellcheck, load test, loop runs…
pub fn misc(kind: char, task: &TaskFiles, rng: &mut Lcg) -> String {
    match kind {
        'm' => format!(
            "Applied {}/migrate {} {} ({}.{}ms)",
            20_261_000 + rng.range(10, 99),
            word(rng),
            word(rng),
            rng.range(10, 90),
            rng.below(10)
        ),
        'k' => format!(
            "backfill: {} rows updated in {} chunks, replica lag max {}.{}s",
            rng.range(10_000, 90_000),
            rng.range(8, 40),
            rng.below(3),
            rng.below(10)
        ),
        'h' => match rng.below(2) {
            0 => String::new(),
            _ => format!(
                "In {} line {}:\n  {} \"$1\"\n  ^-- SC2086 (info): Double quote to prevent globbing and word splitting.",
                task.file(0),
                rng.range(10, 90),
                word(rng)
            ),
        },
        'y' => format!(
            "deployment \"billing-api\" successfully rolled out ({} of {} updated replicas are available)",
            3, 3
        ),
        'z' => format!(
            "http_req_duration: avg={}ms p(90)={}ms p(99)={}ms\nhttp_reqs: {} ({}.{}/s)",
            rng.range(40, 400),
            rng.range(100, 600),
            rng.range(200, 900),
            rng.range(20_000, 90_000),
            rng.range(100, 900),
            rng.below(10)
        ),
        'L' => format!(
            "{} runs, 0 failures ({}m{}s)",
            rng.range(150, 250),
            rng.range(2, 9),
            rng.below(60)
        ),
        'q' => format!(
            "NAME                          CPU(cores)   MEMORY(bytes)\nbilling-api-{}-{}   {}m         {}Mi",
            rng.hex(6),
            rng.hex(5),
            rng.range(80, 900),
            rng.range(180, 480)
        ),
        'x' => "advisories ok, bans ok, licenses ok, sources ok".to_string(),
        'v' => String::new(),
        'w' => format!(
            "workflow ci: lint ✓ ({}m{}s), test ✓ ({}m{}s), release skipped",
            rng.range(1, 4),
            rng.below(60),
            rng.range(4, 12),
            rng.below(60)
        ),
        'p' => format!(
            "To github.com:demo/billing.git\n * [new branch]      {} -> {}\nremote: Create a pull request: https://github.com/demo/billing/pull/new/{}",
            task.krate, task.krate, task.krate
        ),
        'l' => {
            let mut out = String::new();
            for i in 0..task.files.len() {
                out.push_str(task.file(i));
                out.push('\n');
            }
            out
        }
        _ => "ok".to_string(),
    }
}
