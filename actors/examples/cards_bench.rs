//! Measures the card book: vault load time and matching latency for a 1,000-card vault against
//! a 3-turn window. Run through `scripts/bench` (release build); prints markdown rows.

use std::path::Path;
use std::time::{Duration, Instant};

use lore_actors::cards::book::CardBook;
use lore_actors::cards::{BpeTokenCounter, MatchOptions, Turn, consult, warm_up};
use lore_storage::Vault;

const CARDS: usize = 1000;
const SURNAMES: [&str; 10] = [
    "Okafor",
    "Lindqvist",
    "Tanaka",
    "Moreau",
    "Haddad",
    "Kowalski",
    "Silva",
    "Nakamura",
    "Brennan",
    "Ivanova",
];

fn write_vault(root: &Path) {
    for index in 0..CARDS {
        let name = format!("Person{index} {}", SURNAMES[index % SURNAMES.len()]);
        let text = format!(
            "---\ntitle: {name}\nkeywords: [Person{index}, proj-{index}]\naliases: [P{index}]\n---\n## who\n{name} works on project {index}.\n## stance\nLikes tests.\n## recent\nShipped build {index}.\n## impression\nCareful.\n"
        );
        let path = root.join("people").join(format!("person{index}.md"));
        std::fs::create_dir_all(path.parent().unwrap_or(root)).unwrap_or_default();
        std::fs::write(path, text).unwrap_or_default();
    }
}

fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1]
}

fn main() {
    let root = std::env::temp_dir().join(format!("lore-cards-bench-{}", std::process::id()));
    write_vault(&root);
    warm_up();
    let vault = Vault::new(&root);
    let mut loads = Vec::new();
    let mut book = CardBook::default();
    for _ in 0..5 {
        let started = Instant::now();
        book = CardBook::new(vault.load(None));
        loads.push(started.elapsed());
    }
    let mut reloads = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let snapshot = vault.load(Some(&book.snapshot));
        reloads.push(started.elapsed());
        assert_eq!(snapshot.fingerprint, book.snapshot.fingerprint);
    }
    let history = [
        Turn::user("Can you look at the flaky payment test?"),
        Turn::assistant("Sure, the retry logic in the client looks suspicious."),
        Turn::user("Agreed. Also check the deploy notes."),
        Turn::assistant("Done; the notes mention the cache warmup."),
        Turn::user("Good. Anything else?"),
        Turn::assistant("Only the migration plan."),
    ];
    let options = MatchOptions::with_budget(600);
    let mut hits = Vec::new();
    let mut misses = Vec::new();
    for round in 0..2000 {
        let query = if round % 2 == 0 {
            format!(
                "What did Person{} say about proj-{}?",
                round % CARDS,
                (round * 7) % CARDS
            )
        } else {
            "Let us refactor the parser and run the whole suite again.".to_string()
        };
        let started = Instant::now();
        let result = consult(&book.cards, &history, &query, &options, &BpeTokenCounter);
        let elapsed = started.elapsed();
        if result.fired.is_empty() {
            misses.push(elapsed)
        } else {
            hits.push(elapsed)
        }
    }
    println!("| card book ({CARDS} cards) | p50 | p99 |");
    println!("|---|---|---|");
    println!(
        "| vault load, cold parse (5 loads) | {:?} | {:?} (max) |",
        quantile(&mut loads, 0.5),
        quantile(&mut loads, 1.0)
    );
    println!(
        "| vault reload, nothing changed (5 reloads) | {:?} | {:?} (max) |",
        quantile(&mut reloads, 0.5),
        quantile(&mut reloads, 1.0)
    );
    println!(
        "| match, 3-turn window, cards fire ({} runs) | {:?} | {:?} |",
        hits.len(),
        quantile(&mut hits, 0.5),
        quantile(&mut hits, 0.99)
    );
    println!(
        "| match, 3-turn window, nothing fires ({} runs) | {:?} | {:?} |",
        misses.len(),
        quantile(&mut misses, 0.5),
        quantile(&mut misses, 0.99)
    );
    let _ = std::fs::remove_dir_all(&root);
}
