//! The Markdown report of a run: the session, compression, worker calls and cost; the recall
//! part is [`super::recall_report`].

use std::fmt::Write;
use std::time::Duration;

use serde_json::Value;

use super::drive::Drive;
use super::measure::{Asked, Distilled, Tokens, Workers};
use super::recall_report;

/// Figures of the generated session.
#[derive(Debug, Default)]
pub struct SessionFigures {
    /// Requests (turns).
    pub turns: usize,
    /// User requests (steps).
    pub user_requests: usize,
    /// Messages.
    pub messages: usize,
    /// Tool results, and how many are over 4,000 characters.
    pub tool_results: (usize, usize),
    /// cl100k tokens of the rendered messages.
    pub raw_tokens: u64,
    /// The gateway's estimate (chars / 3) of the same text.
    pub raw_estimate: u64,
    /// Each task: name, user requests, turns.
    pub tasks: Vec<(&'static str, usize, usize)>,
    /// The turn (1-based) that states each fact, in the order of the facts.
    pub stated_in: Vec<usize>,
}

/// One phase (gateway) of the run.
pub struct Phase {
    /// Driving figures.
    pub drive: Drive,
    /// The questions' outcomes.
    pub asked: Vec<Asked>,
    /// Whether vectors took part in recall.
    pub vectors: bool,
    /// Waiting for the vectorizer to embed everything before the questions.
    pub index_wait: Duration,
}

/// What the memory workers left and cost.
pub struct Memory {
    /// The distillations at the end.
    pub distilled: Vec<Distilled>,
    /// The worker calls.
    pub workers: Workers,
    /// `/api/v1/actors` at the end.
    pub actors: Value,
    /// `distilled_through_seq` at the end.
    pub cursor: u64,
}

/// Everything the report shows.
pub struct Run {
    /// The session.
    pub session: SessionFigures,
    /// Memory off.
    pub before: Phase,
    /// Memory on.
    pub after: Phase,
    /// The memory workers' output and calls.
    pub memory: Memory,
    /// Whole run.
    pub elapsed: Duration,
}

const PRICES: [(&str, f64, f64); 2] = [
    ("claude-haiku-4-5", 1.0, 5.0),
    ("claude-sonnet-4", 3.0, 15.0),
];

/// The report.
pub fn render(run: &Run, tokens: &Tokens) -> String {
    let mut out = String::new();
    let s = &run.session;
    let per100 = |x: f64| x * 100.0 / s.turns.max(1) as f64;
    let _ = writeln!(out, "### Session\n\n| figure | value |\n|---|---|");
    let _ = writeln!(
        out,
        "| turns (requests through the gateway) | {} |",
        s.turns
    );
    let _ = writeln!(
        out,
        "| user requests / tasks | {} / {} |",
        s.user_requests,
        s.tasks.len()
    );
    let _ = writeln!(out, "| messages | {} |", s.messages);
    let _ = writeln!(
        out,
        "| tool results (over 4,000 chars) | {} ({}) |",
        s.tool_results.0, s.tool_results.1
    );
    let _ = writeln!(out, "| raw session tokens, cl100k | {} |", s.raw_tokens);
    let _ = writeln!(
        out,
        "| raw session tokens, gateway estimate (chars / 3) | {} |",
        s.raw_estimate
    );

    let tasks: Vec<String> = s
        .tasks
        .iter()
        .map(|(name, steps, turns)| format!("{name} ({steps} requests, {turns} turns)"))
        .collect();
    let _ = writeln!(out, "\nTasks, in order: {}.", tasks.join("; "));

    let gen0: Vec<&Distilled> = run
        .memory
        .distilled
        .iter()
        .filter(|d| d.generation == 0)
        .collect();
    let metas: Vec<&Distilled> = run
        .memory
        .distilled
        .iter()
        .filter(|d| d.generation > 0)
        .collect();
    let live: Vec<&Distilled> = run
        .memory
        .distilled
        .iter()
        .filter(|d| !d.archived)
        .collect();
    let source: u64 = gen0.iter().map(|d| d.source_tokens).sum();
    let gen0_tokens: u64 = gen0.iter().map(|d| d.tokens).sum();
    let gen0_cl: u64 = gen0.iter().map(|d| tokens.count(&d.text)).sum();
    let live_tokens: u64 = live.iter().map(|d| d.tokens).sum();
    let live_cl: u64 = live.iter().map(|d| tokens.count(&d.text)).sum();
    let ratio = |a: u64, b: u64| a as f64 / b.max(1) as f64;
    let _ = writeln!(out, "\n### Compression\n\n| figure | value |\n|---|---|");
    let _ = writeln!(
        out,
        "| messages distilled at the end (the rest wait for the five-message threshold) | {} of {} |",
        run.memory.cursor, s.messages
    );
    let _ = writeln!(
        out,
        "| observation logs (generation 0) / consolidations / archived | {} / {} / {} |",
        gen0.len(),
        metas.len(),
        run.memory.distilled.iter().filter(|d| d.archived).count()
    );
    let _ = writeln!(
        out,
        "| observer input, Σ source_tokens of generation 0 (gateway estimate; long tool outputs already annotated) | {source} |"
    );
    let _ = writeln!(
        out,
        "| observation logs, Σ tokens of generation 0 (gateway estimate) | {gen0_tokens} |"
    );
    let _ = writeln!(
        out,
        "| **compression ratio, Σ source_tokens / Σ tokens** | **{:.1}×** |",
        ratio(source, gen0_tokens)
    );
    let _ = writeln!(
        out,
        "| raw session cl100k / observation logs cl100k ({gen0_cl}) | {:.1}× |",
        ratio(s.raw_tokens, gen0_cl)
    );
    let _ = writeln!(
        out,
        "| context prefix the memory keeps: live logs + live consolidation, estimate / cl100k | {live_tokens} / {live_cl} |"
    );
    let _ = writeln!(
        out,
        "| raw session / that prefix (cl100k) | {:.1}× |",
        ratio(s.raw_tokens, live_cl)
    );
    let (read, allowed) = run.memory.workers.observer_tokens;
    let _ = writeln!(
        out,
        "| observer calls: messages read (cl100k) / Σ max_tokens allowed, the least compression a model that respects max_tokens writes | {read} / {allowed} = {:.1}× |",
        ratio(read, allowed)
    );

    let _ = writeln!(
        out,
        "\n### Worker calls (worker model named in the calls: {})\n",
        run.memory.workers.models.join(", ")
    );
    let _ = writeln!(
        out,
        "| bucket | calls | calls / 100 turns | input tokens / 100 turns (cl100k of system + user) | output tokens / 100 turns (cl100k of the fake's replies) | output ceiling / 100 turns (Σ max_tokens) | recorded by the gateway: input / output per 100 turns | recorded cost, whole run |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    let (mut input, mut output, mut calls, mut ceiling, mut capped) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    for (name, b) in &run.memory.workers.buckets {
        input += b.input;
        output += b.output;
        calls += b.calls;
        ceiling += b.ceiling;
        capped += b.capped;
        let _ = writeln!(
            out,
            "| {name} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} / {:.0} | ${:.4} |",
            b.calls,
            per100(b.calls as f64),
            per100(b.input as f64),
            per100(b.output as f64),
            per100(b.ceiling as f64),
            per100(b.recorded.1 as f64),
            per100(b.recorded.2 as f64),
            b.recorded.3
        );
    }
    let _ = writeln!(
        out,
        "| **all** | {calls} | {:.1} | **{:.0}** | **{:.0}** | {:.0} | | |",
        per100(calls as f64),
        per100(input as f64),
        per100(output as f64),
        per100(ceiling as f64)
    );
    let _ = writeln!(
        out,
        "\n| price (input / output, $ per M tokens) | cost per 100 turns | whole session ({} turns) | per 100 turns, the fake's replies cut at max_tokens | per 100 turns, every call writing its max_tokens |\n|---|---|---|---|---|",
        s.turns
    );
    for (model, pin, pout) in PRICES {
        let cost = (input as f64 * pin + output as f64 * pout) / 1e6;
        let cut = (input as f64 * pin + capped as f64 * pout) / 1e6;
        let most = (input as f64 * pin + ceiling as f64 * pout) / 1e6;
        let _ = writeln!(
            out,
            "| {model} (${pin} / ${pout}) | **${:.4}** | ${cost:.4} | ${:.4} | ${:.4} |",
            per100(cost),
            per100(cut),
            per100(most)
        );
    }
    let d = &run.memory.actors["distiller"];
    let c = &run.memory.actors["curator"];
    let _ = writeln!(
        out,
        "\nDistiller: {} jobs, {} observation logs, {} consolidations, {} outputs rejected as expanding, {} yielded to a request, {} failures. Curator: {} runs, {} entries created.",
        d["jobs"],
        d["distillations"],
        d["consolidations"],
        d["rejected"],
        d["yielded"],
        d["failures"],
        c["runs"],
        c["created"]
    );

    recall_report::render(&mut out, run);

    let (b, a) = (&run.before.drive, &run.after.drive);
    let _ = writeln!(out, "\n### Run\n\n| figure | value |\n|---|---|");
    let _ = writeln!(out, "| whole run | {:.1} s |", run.elapsed.as_secs_f64());
    let _ = writeln!(
        out,
        "| memory off: requests | {:.1} s |",
        b.requests_time.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| memory on: requests / waiting at {} pauses ({} timed out) | {:.1} s / {:.1} s |",
        a.pauses,
        a.pause_timeouts,
        a.requests_time.as_secs_f64(),
        a.pause_time.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| waiting for the vectorizer to embed everything before the questions: before / after | {:.1} s / {:.1} s |",
        run.before.index_wait.as_secs_f64(),
        run.after.index_wait.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| vectors used by recall: before / after | {} / {} |",
        run.before.vectors, run.after.vectors
    );
    out
}
