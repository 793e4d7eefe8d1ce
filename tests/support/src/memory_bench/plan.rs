//! Plan tokens of [`super::tasks`] turned into tool calls: the tool name, its arguments, the
//! output the harness sends back, and whether that output is an error.

use serde_json::{Value, json};

use super::facts;
use super::filler::{self, Lcg, TaskFiles};
use super::logs;

/// Sentences the assistant may say before a tool call (`{file}`: the file it works on).
pub const INTROS: &[&str] = &[
    "Let me look at {file} first.",
    "I'll check {file}.",
    "Running that now.",
    "Let me verify with the build.",
];

/// One tool call of a plan token: `(name, input, output, is_error)`.
pub fn tool(token: &str, task: &TaskFiles, rng: &mut Lcg) -> (&'static str, Value, String, bool) {
    let arg = token
        .get(1..)
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let bash = |cmd: String| json!({"command": cmd});
    let krate = task.krate;
    match token.chars().next().unwrap_or('?') {
        'f' => facts::fact_tool(arg, task, rng).unwrap_or((
            "bash",
            bash("true".into()),
            String::new(),
            false,
        )),
        'r' => {
            let path = task.file(arg);
            (
                "read_file",
                json!({"path": path}),
                filler::file_contents(path, task, rng),
                false,
            )
        }
        'e' => {
            let path = task.file(arg);
            let input = json!({"path": path, "old": format!("fn {}(", rng.pick(task.symbols)), "new": format!("fn {}_checked(", rng.pick(task.symbols))});
            ("edit", input, filler::edit_result(path, rng), false)
        }
        'g' => {
            let symbol = task.symbols[arg % task.symbols.len()];
            (
                "bash",
                bash(format!("rg -n '{symbol}'")),
                logs::grep_hits(task, symbol, rng),
                false,
            )
        }
        'b' => (
            "bash",
            bash(format!("cargo build -p {krate}")),
            filler::build_ok(task, rng),
            false,
        ),
        'B' => (
            "bash",
            bash(format!("cargo build -p {krate} 2>&1")),
            filler::build_log(task, rng, true),
            true,
        ),
        'W' => (
            "bash",
            bash("cargo clippy --all-targets 2>&1".into()),
            filler::build_log(task, rng, false),
            false,
        ),
        't' => (
            "bash",
            bash(format!("cargo test -p {krate}")),
            logs::test_ok(task, rng),
            false,
        ),
        'T' => {
            let failing = format!("{}::{}", rng.pick(task.tests), rng.below(90));
            (
                "bash",
                bash(format!("cargo test -p {krate} 2>&1")),
                logs::test_log(task, rng, &failing, None, &[]),
                true,
            )
        }
        'P' => (
            "bash",
            bash("perf report --stdio --no-children | head -120".into()),
            logs::perf_report(rng, None),
            false,
        ),
        'G' => {
            let failure = vec![format!(
                "error: test {} failed on the matrix entry ubuntu-latest",
                rng.pick(task.tests)
            )];
            (
                "bash",
                bash("gh run watch --exit-status".into()),
                logs::ci_log(rng, &failure),
                true,
            )
        }
        'd' => (
            "bash",
            bash("git diff --stat".into()),
            logs::diff_stat(task, rng),
            false,
        ),
        'c' => (
            "bash",
            bash("git commit -am \"wip\"".into()),
            logs::commit(task, rng),
            false,
        ),
        kind => {
            let command = match kind {
                'm' => "sqlx migrate run",
                'k' => "cargo run --bin backfill",
                'h' => "shellcheck deploy/*.sh",
                'y' => "kubectl rollout status deploy/billing-api",
                'z' => "k6 run bench/invoices.js",
                'L' => "for i in $(seq 200); do cargo test --test lease_renewal -q || break; done",
                'q' => "kubectl top pods -l app=billing-api",
                'x' => "cargo deny check",
                'v' => "actionlint",
                'w' => "gh run view --log-failed",
                'p' => "git push -u origin HEAD",
                _ => "ls",
            };
            (
                "bash",
                bash(command.into()),
                logs::misc(kind, task, rng),
                false,
            )
        }
    }
}
