//! `quality`: loads both halves of the labelled set (the tuning half and the held-out half)
//! into one fresh data directory, reindexes with the real binary, starts the gateway and asks
//! every question in every mode; prints recall@5, recall@10 and MRR@10 per half and mode, per
//! question group, whether the snippet shows the answer's evidence, and for answers that
//! changed later whether the current one outranks the one it replaced.

use std::collections::BTreeMap;

use lore_test_support::retrieval::held_out::HeldOutSet;
use lore_test_support::retrieval::{Question, RetrievalSet, Session, loader};
use serde_json::json;

use crate::Options;
use crate::gateway::{Answer, Gateway, reindex};

const LIMIT: usize = 10;
/// Characters of the snippet the API showed before snippets followed the best match: the
/// start of the message.
const OLD_SNIPPET_CHARS: usize = 300;

/// Sums of one cell of the table.
#[derive(Debug, Default, Clone, Copy)]
struct Score {
    questions: usize,
    at5: usize,
    at10: usize,
    reciprocal: f64,
    failed: usize,
}

impl Score {
    fn add(&mut self, rank: Option<usize>, failed: bool) {
        self.questions += 1;
        self.failed += usize::from(failed);
        if let Some(rank) = rank {
            self.at5 += usize::from(rank <= 5);
            self.at10 += usize::from(rank <= 10);
            if rank <= 10 {
                self.reciprocal += 1.0 / rank as f64;
            }
        }
    }

    fn cells(&self) -> String {
        let n = self.questions.max(1) as f64;
        format!(
            "{} | {:.3} | {:.3} | {:.3} | {}",
            self.questions,
            self.at5 as f64 / n,
            self.at10 as f64 / n,
            self.reciprocal / n,
            self.failed
        )
    }
}

/// One half of the set as the eval asks it.
struct Half<'a> {
    name: &'static str,
    sessions: &'a [Session],
    questions: &'a [Question],
}

impl Half<'_> {
    /// The groups a question is counted in besides "all".
    fn groups(&self, question: &Question) -> Vec<String> {
        if self.name == "tuning" {
            vec![question.question_type.as_str().to_string()]
        } else {
            let wording = match question.question_type.as_str() {
                "paraphrase" => "question 1 (no shared words)",
                _ => "question 2 (one identifier)",
            };
            vec![format!("fact {}", question.fact), wording.to_string()]
        }
    }

    /// The old snippet of a question's answer: the first characters of its searchable text.
    fn old_snippet(&self, question: &Question) -> String {
        let message = loader::message_of(&self.sessions[question.session], question.message);
        let text = message
            .parts
            .iter()
            .filter_map(|part| match part {
                lore_proto::Part::Text { text } => Some(text.clone()),
                lore_proto::Part::ToolCall {
                    name, arguments, ..
                } => Some(format!("[tool:{name}] {arguments}")),
                lore_proto::Part::ToolResult { content, .. } => Some(content.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        text.chars().take(OLD_SNIPPET_CHARS).collect()
    }
}

/// What one mode produced for each question of a half.
type Answers = Vec<Result<Answer, String>>;

fn ask_all(gateway: &Gateway, questions: &[Question], mode: &str) -> Answers {
    questions
        .iter()
        .map(|question| {
            gateway
                .recall_hits(&question.text, mode, LIMIT)
                .map_err(|err| err.to_string())
        })
        .collect()
}

/// The 1-based rank of `answer` in `ids`.
pub fn rank_of(ids: &[String], answer: &str) -> Option<usize> {
    ids.iter().position(|id| id == answer).map(|p| p + 1)
}

fn rank_in(answer: &Answer, id: &str) -> Option<usize> {
    answer
        .hits
        .iter()
        .position(|hit| hit.id == id)
        .map(|p| p + 1)
}

/// Runs the quality evaluation and prints the tables.
pub fn run(options: &Options) -> anyhow::Result<()> {
    let tuning = RetrievalSet::generate();
    let held = HeldOutSet::generate();
    let halves = [
        Half {
            name: "tuning",
            sessions: &tuning.sessions,
            questions: &tuning.questions,
        },
        Half {
            name: "held-out",
            sessions: &held.sessions,
            questions: &held.questions,
        },
    ];
    // Both halves are always loaded (one corpus); only the asked ones are queried.
    let halves: Vec<&Half> = halves
        .iter()
        .filter(|half| options.halves.iter().any(|name| name == half.name))
        .collect();
    anyhow::ensure!(
        !halves.is_empty(),
        "--halves names neither `tuning` nor `held-out`"
    );
    let dir = options.scratch("quality")?;
    let messages = loader::load(&dir, tuning.sessions.iter().chain(&held.sessions))?;
    let (took, said) = reindex(&options.lore, &dir)?;
    eprintln!("loaded {messages} messages; lore reindex took {took:.2?} ({said})");
    let gateway = Gateway::start(&options.lore, &dir)?;
    let mut results: BTreeMap<(&str, &str), Answers> = BTreeMap::new();
    for mode in &options.modes {
        for half in halves.iter().copied() {
            eprintln!(
                "asking the {} questions of the {} half in mode {mode}",
                half.questions.len(),
                half.name
            );
            let started = std::time::Instant::now();
            let answers = ask_all(&gateway, half.questions, mode);
            eprintln!("  took {:.1?}", started.elapsed());
            results.insert((half.name, mode.as_str()), answers);
        }
    }
    gateway.stop()?;

    println!(
        "Labelled set: tuning half {} sessions / {} questions, held-out half {} sessions / {} questions, {messages} messages in one data directory (limit {LIMIT}, scope all).",
        tuning.sessions.len(),
        tuning.questions.len(),
        held.sessions.len(),
        held.questions.len()
    );
    println!();
    let mut main = vec![
        "| half | mode | questions | recall@5 | recall@10 | MRR@10 | failed queries |".to_string(),
        "|---|---|---|---|---|---|---|".to_string(),
    ];
    let mut groups = vec![
        "| half | mode | group | questions | recall@5 | recall@10 | MRR@10 | failed |".to_string(),
        "|---|---|---|---|---|---|---|---|".to_string(),
    ];
    let mut snippets = vec![
        "| half | mode | answers in the top 10 | evidence in the snippet | evidence in the first 300 characters (the old snippet) |".to_string(),
        "|---|---|---|---|---|".to_string(),
    ];
    let mut changed = vec![
        "| mode | changed facts asked | current answer above the replaced one | replaced one above (or only it in the top 10) | neither in the top 10 |".to_string(),
        "|---|---|---|---|---|".to_string(),
    ];
    let mut reranked = Vec::new();
    let mut report = Vec::new();
    for mode in &options.modes {
        for half in halves.iter().copied() {
            let answers = &results[&(half.name, mode.as_str())];
            if let Some(Err(err)) = answers.first()
                && answers.iter().all(Result::is_err)
            {
                main.push(format!(
                    "| {} | {mode} | unavailable: {} | | | | |",
                    half.name,
                    err.replace('|', "/")
                ));
                continue;
            }
            let mut total = Score::default();
            let mut by_group: BTreeMap<String, Score> = BTreeMap::new();
            let (mut found, mut shown, mut shown_before) = (0, 0, 0);
            let (mut current_first, mut stale_first, mut neither, mut asked_changed) = (0, 0, 0, 0);
            let mut not_reranked = 0;
            for (question, answer) in half.questions.iter().zip(answers) {
                let rank = answer
                    .as_ref()
                    .ok()
                    .and_then(|answer| rank_in(answer, &question.answer_id));
                total.add(rank, answer.is_err());
                for group in half.groups(question) {
                    by_group
                        .entry(group)
                        .or_default()
                        .add(rank, answer.is_err());
                }
                if let Ok(answer) = answer {
                    not_reranked += usize::from(mode.contains("+rerank") && !answer.reranked);
                    if let Some(rank) = rank {
                        found += 1;
                        let snippet = &answer.hits[rank - 1].snippet;
                        shown += usize::from(snippet.contains(&question.evidence));
                        shown_before +=
                            usize::from(half.old_snippet(question).contains(&question.evidence));
                    }
                    if let Some(stale) = &question.superseded {
                        asked_changed += 1;
                        match (rank, rank_in(answer, stale)) {
                            (Some(now), Some(old)) if now < old => current_first += 1,
                            (Some(_), None) => current_first += 1,
                            (None, None) => neither += 1,
                            _ => stale_first += 1,
                        }
                    }
                }
                if let Err(err) = answer {
                    eprintln!("{mode}: {} {:?} failed: {err}", question.id, question.text);
                }
                report.push(
                    json!({"half": half.name, "mode": mode, "question": question.id,
                    "fact": question.fact, "type": question.question_type, "rank": rank,
                    "error": answer.as_ref().err()}),
                );
            }
            main.push(format!("| {} | {mode} | {} |", half.name, total.cells()));
            for (group, score) in &by_group {
                groups.push(format!(
                    "| {} | {mode} | {group} | {} |",
                    half.name,
                    score.cells()
                ));
            }
            let share = |count: usize| count as f64 / found.max(1) as f64;
            snippets.push(format!(
                "| {} | {mode} | {found} | {shown} ({:.3}) | {shown_before} ({:.3}) |",
                half.name,
                share(shown),
                share(shown_before)
            ));
            if asked_changed > 0 {
                changed.push(format!(
                    "| {mode} | {asked_changed} | {current_first} | {stale_first} | {neither} |"
                ));
            }
            if mode.contains("+rerank") {
                reranked.push(format!(
                    "{} half, {mode}: {not_reranked} of {} answers were not reranked (deadline or failure; their order is the fused one).",
                    half.name,
                    half.questions.len()
                ));
            }
        }
    }
    for table in [&main, &groups, &snippets, &changed] {
        println!("{}", table.join("\n"));
        println!();
    }
    for line in &reranked {
        println!("{line}");
    }
    println!("A failed query (an HTTP error from the gateway) counts as a miss.");
    if let Some(path) = &options.report {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
        eprintln!("per-question ranks written to {}", path.display());
    }
    options.clean(&dir);
    Ok(())
}
