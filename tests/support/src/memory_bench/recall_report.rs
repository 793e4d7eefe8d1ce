//! The recall part of the report: the 30 questions before and after distillation, per mode,
//! what is found among the distillations alone, per place the fact was stated, per question,
//! and the facts distillation lost.

use std::fmt::Write;

use super::facts::Place;
use super::measure::{Asked, Distilled, Ranks, VARIANTS, distilled_holds, holds};
use super::report::Run;

fn share(n: usize, of: usize) -> String {
    format!("{n}/{of} ({:.0} %)", 100.0 * n as f64 / of.max(1) as f64)
}

fn within(ranks: &[Option<usize>], k: usize) -> usize {
    ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count()
}

fn rank(r: Option<usize>) -> String {
    r.map_or("–".to_string(), |r| r.to_string())
}

/// `S / P`: the ranks of the first two variants.
fn pair(asked: &Asked, f: fn(&Ranks) -> Option<usize>) -> String {
    let at = |v: usize| rank(asked.ranks.get(v).and_then(f));
    format!("{} / {}", at(0), at(1))
}

fn place(p: Place) -> &'static str {
    match p {
        Place::User => "user",
        Place::Assistant => "assistant",
        Place::ToolOutput { long: false } => "tool output",
        Place::ToolOutput { long: true } => "long tool output",
    }
}

/// Appends the recall sections to `out`.
pub fn render(out: &mut String, run: &Run) {
    let s = &run.session;
    let observer = &run.memory.workers.observer_input;
    let live: Vec<&Distilled> = run
        .memory
        .distilled
        .iter()
        .filter(|d| !d.archived)
        .collect();
    let n = run.after.asked.len();
    let _ = writeln!(out, "\n### Recall of the 30 facts (limit 10)\n");
    let _ = writeln!(
        out,
        "| phase | query | found in top 5 | found in top 10 | found in a distillation in the top 10 | among distillations alone, top 5 / top 10 |\n|---|---|---|---|---|---|"
    );
    for (v, (variant, _, _)) in VARIANTS.iter().enumerate() {
        for (label, phase) in [
            ("before (memory off)", &run.before),
            ("after distillation", &run.after),
        ] {
            let ranks: Vec<Ranks> = phase
                .asked
                .iter()
                .filter_map(|a| a.ranks.get(v).copied())
                .collect();
            let pick = |f: fn(&Ranks) -> Option<usize>| ranks.iter().map(f).collect::<Vec<_>>();
            let (any, dist, among) = (
                pick(|r| r.any),
                pick(|r| r.distilled),
                pick(|r| r.among_distilled),
            );
            let dcols = if label.starts_with("before") {
                "– | –".to_string()
            } else {
                format!(
                    "{} | {} / {}",
                    share(within(&dist, 10), n),
                    share(within(&among, 5), n),
                    share(within(&among, 10), n)
                )
            };
            let _ = writeln!(
                out,
                "| {label} | {variant} | {} | {} | {dcols} |",
                share(within(&any, 5), n),
                share(within(&any, 10), n)
            );
        }
    }
    let all: Vec<&Distilled> = run.memory.distilled.iter().collect();
    let kept = run
        .after
        .asked
        .iter()
        .filter(|a| distilled_holds(&all, a.fact.key))
        .count();
    let in_live = run
        .after
        .asked
        .iter()
        .filter(|a| distilled_holds(&live, a.fact.key))
        .count();
    let _ = writeln!(
        out,
        "\nAnswer key present in the text of some distillation (live or archived): {}; in the live context prefix: {}.",
        share(kept, n),
        share(in_live, n)
    );
    let _ = writeln!(
        out,
        "\n| where the fact was stated | facts | key reached the observer | key kept by distillation | found among distillations (top 10): session / project hybrid |\n|---|---|---|---|---|"
    );
    for p in [
        Place::User,
        Place::Assistant,
        Place::ToolOutput { long: false },
        Place::ToolOutput { long: true },
    ] {
        let of: Vec<&Asked> = run
            .after
            .asked
            .iter()
            .filter(|a| a.fact.place == p)
            .collect();
        let kept = of
            .iter()
            .filter(|a| distilled_holds(&all, a.fact.key))
            .count();
        let found = |v: usize| {
            of.iter()
                .filter(|a| a.ranks.get(v).is_some_and(|r| r.among_distilled.is_some()))
                .count()
        };
        let seen = of.iter().filter(|a| holds(observer, a.fact.key)).count();
        let _ = writeln!(
            out,
            "| {} | {} | {seen} | {kept} | {} / {} |",
            place(p),
            of.len(),
            found(0),
            found(1)
        );
    }

    let _ = writeln!(
        out,
        "\nRanks per question (– = not in the top 10): S = scope session, P = scope project hybrid.\n\n| # | stated in (turn) | answer key | before S / P | after S / P | after, among distillations S / P | kept in a distillation | in the live prefix |\n|---|---|---|---|---|---|---|---|"
    );
    for (i, (b, a)) in run.before.asked.iter().zip(&run.after.asked).enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} ({}) | `{}` | {} | {} | {} | {} | {} |",
            a.fact.id,
            place(a.fact.place),
            s.stated_in.get(i).copied().unwrap_or(0),
            a.fact.key,
            pair(b, |r| r.any),
            pair(a, |r| r.any),
            pair(a, |r| r.among_distilled),
            if distilled_holds(&all, a.fact.key) {
                "yes"
            } else {
                "**no**"
            },
            if distilled_holds(&live, a.fact.key) {
                "yes"
            } else {
                "no"
            }
        );
    }
    let lost: Vec<String> = run
        .after
        .asked
        .iter()
        .filter(|a| !distilled_holds(&all, a.fact.key))
        .map(|a| {
            format!(
                "- {} ({}, `{}`): {} — {}",
                a.fact.id,
                place(a.fact.place),
                a.fact.key,
                a.fact.statement.lines().next().unwrap_or(""),
                if holds(observer, a.fact.key) {
                    "the observer read it and left it out"
                } else {
                    "it never reached the observer (dropped from the tool-output annotation)"
                }
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "\n**Facts lost by distillation** (answer key in no distillation): {}\n",
        lost.len()
    );
    for line in &lost {
        let _ = writeln!(out, "{line}");
    }
}
