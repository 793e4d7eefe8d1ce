//! `quality`: loads the labelled set into a fresh data directory, reindexes with the real
//! binary, starts the gateway and asks every question in every mode; prints recall@5,
//! recall@10 and MRR@10, overall and per question type, as a markdown table.

use std::collections::BTreeMap;

use lore_test_support::retrieval::{QuestionType, RetrievalSet, loader};
use serde_json::json;

use crate::Options;
use crate::gateway::{Gateway, reindex};

const LIMIT: usize = 10;

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

    fn row(&self, mode: &str, label: &str) -> String {
        let n = self.questions.max(1) as f64;
        format!(
            "| {mode} | {label} | {} | {:.3} | {:.3} | {:.3} | {} |",
            self.questions,
            self.at5 as f64 / n,
            self.at10 as f64 / n,
            self.reciprocal / n,
            self.failed
        )
    }
}

/// What one mode produced for each question: the ranked ids, or the error the gateway sent.
type Answers = Vec<Result<Vec<String>, String>>;

fn ask_all(gateway: &Gateway, set: &RetrievalSet, mode: &str) -> Answers {
    set.questions
        .iter()
        .map(|question| {
            gateway
                .recall(&question.text, mode, LIMIT)
                .map_err(|err| err.to_string())
        })
        .collect()
}

/// The 1-based rank of `answer` in `ids`.
pub fn rank_of(ids: &[String], answer: &str) -> Option<usize> {
    ids.iter().position(|id| id == answer).map(|p| p + 1)
}

/// Runs the quality evaluation and prints the table.
pub fn run(options: &Options) -> anyhow::Result<()> {
    let set = RetrievalSet::generate();
    let dir = options.scratch("quality")?;
    let messages = loader::load(&dir, &set.sessions)?;
    let (took, said) = reindex(&options.lore, &dir)?;
    eprintln!("loaded {messages} messages; lore reindex took {took:.2?} ({said})");
    let gateway = Gateway::start(&options.lore, &dir)?;
    let mut results: BTreeMap<&str, Answers> = BTreeMap::new();
    for mode in &options.modes {
        eprintln!("asking {} questions in mode {mode}", set.questions.len());
        results.insert(mode.as_str(), ask_all(&gateway, &set, mode));
    }
    gateway.stop()?;

    println!(
        "Labelled set: {} sessions, {messages} messages, {} questions (limit {LIMIT}, scope all).",
        set.sessions.len(),
        set.questions.len()
    );
    println!();
    println!("| mode | questions | n | recall@5 | recall@10 | MRR@10 | failed queries |");
    println!("|---|---|---|---|---|---|---|");
    let mut report = Vec::new();
    for mode in &options.modes {
        let answers = &results[mode.as_str()];
        if let Some(Err(err)) = answers.first()
            && answers.iter().all(Result::is_err)
        {
            println!(
                "| {mode} | unavailable: {} | | | | | |",
                err.replace('|', "/")
            );
            continue;
        }
        let mut total = Score::default();
        let mut by_type: BTreeMap<QuestionType, Score> = BTreeMap::new();
        for (question, answer) in set.questions.iter().zip(answers) {
            let rank = answer
                .as_ref()
                .ok()
                .and_then(|ids| rank_of(ids, &question.answer_id));
            total.add(rank, answer.is_err());
            by_type
                .entry(question.question_type)
                .or_default()
                .add(rank, answer.is_err());
            if let Err(err) = answer {
                eprintln!("{mode}: {} {:?} failed: {err}", question.id, question.text);
            }
            report.push(
                json!({"mode": mode, "question": question.id, "type": question.question_type,
                "rank": rank, "error": answer.as_ref().err()}),
            );
        }
        println!("{}", total.row(mode, "all"));
        for (question_type, score) in &by_type {
            println!("{}", score.row(mode, question_type.as_str()));
        }
    }
    let rankings: Vec<&Answers> = results.values().collect();
    if rankings.len() > 1 && rankings.windows(2).all(|pair| pair[0] == pair[1]) {
        println!();
        println!(
            "Note: every mode returned identical rankings for every question; this gateway ignores `mode` (BM25 only)."
        );
    }
    println!();
    println!("A failed query (an HTTP error from the gateway) counts as a miss.");
    if let Some(path) = &options.report {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
        eprintln!("per-question ranks written to {}", path.display());
    }
    options.clean(&dir);
    Ok(())
}
