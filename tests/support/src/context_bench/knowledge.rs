//! Long-term knowledge in the prompt, measured (issue 12): conventions stated in passing in one
//! session, curated by the fake's deterministic extractive curator, then
//!
//! - **push**: how many reach a fresh session's first prompt of the same project (and of
//!   another project), and the tokens they add; with `LORE_LTM=off` the same first prompt, and
//!   the same facts through the recall engine alone (`GET /api/v1/recall`, the search the
//!   `recall` tool runs: each found fact costs the model a tool round trip it must decide on);
//! - **cache**: a 30-turn session whose topic moves across the conventions while knowledge
//!   changes at turn 15, its cache-read share and busts with the pin (`LORE_LTM=on`) against
//!   system[2] searched and rendered again every turn (`LORE_LTM=each-turn`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use lore_test_support::http_client;
use lore_test_support::lore_process::LoreProcess;
use lore_test_support::{FakeConfig, FakeUpstream, Script};

const MODEL: &str = "claude-sonnet-4-5";
const PROJECT: &str = "/tmp/ltm-bench/ledger";
const OTHER_PROJECT: &str = "/tmp/ltm-bench/website";
const CLIENT_SYSTEM: &str = "You are a coding agent working in this repository.";

/// The conventions of session one: the rule said in passing, the token that proves it arrived,
/// and the question a user would ask the recall tool about it.
const CONVENTIONS: [(&str, &str, &str); 12] = [
    (
        "We always run cargo clippy with -D warnings before pushing.",
        "clippy with -D warnings",
        "which lint flags before a push",
    ),
    (
        "We never commit directly to the release-2026 branch.",
        "release-2026",
        "can I commit on the release branch",
    ),
    (
        "We prefer thiserror enums over anyhow in library crates.",
        "thiserror enums",
        "error handling crate for libraries",
    ),
    (
        "We use port 6543 for the staging database, always.",
        "port 6543",
        "staging database port",
    ),
    (
        "We always squash merge pull requests into main.",
        "squash merge",
        "how are pull requests merged",
    ),
    (
        "We never log customer email addresses, not even at debug level.",
        "customer email",
        "may I log user emails",
    ),
    (
        "Convention: snake_case module names like ledger_sync.rs everywhere.",
        "ledger_sync.rs",
        "how should I name module files",
    ),
    (
        "Convention: money amounts are i64 cents, never floats.",
        "i64 cents",
        "type for money amounts",
    ),
    (
        "Convention: every migration file is named V<n>__<what>.sql under db/migrations.",
        "V<n>__",
        "migration file naming",
    ),
    (
        "Convention: integration tests live in tests/it_*.rs and use the fixtures crate.",
        "tests/it_",
        "where do integration tests go",
    ),
    (
        "Convention: feature flags are read through flags::enabled, never from env directly.",
        "flags::enabled",
        "how to check a feature flag",
    ),
    (
        "Convention: timestamps are stored as UTC milliseconds in u64 columns.",
        "UTC milliseconds",
        "timestamp storage format",
    ),
];

/// The figures of the push measurement.
#[derive(Debug, Default)]
pub struct Push {
    pub conventions: usize,
    pub curated: usize,
    pub in_first_prompt: usize,
    pub in_other_project: usize,
    pub tokens_added: u64,
    pub in_first_prompt_ltm_off: usize,
    pub recall_top5: usize,
    pub seconds_to_curate: f64,
}

/// The figures of one 30-turn run.
#[derive(Debug, Default)]
pub struct Cache {
    pub mode: String,
    pub turns: usize,
    pub read_share: f64,
    pub busts: usize,
    pub system2_versions: usize,
    pub deltas: usize,
}

/// One conversation of a project, resent in full every turn.
struct Chat<'a> {
    base: String,
    upstream: &'a FakeUpstream,
    session: String,
    project: &'a str,
    history: Vec<Value>,
}

impl Chat<'_> {
    fn turn(&mut self, text: &str) -> anyhow::Result<Value> {
        self.history
            .push(json!({"role": "user", "content": [{"type": "text", "text": text}]}));
        let mut messages = self.history.clone();
        if let Some(Value::Object(last)) = messages
            .last_mut()
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|b| b.last_mut())
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        self.upstream.push(Script::Text(
            "Done; the change is in and the tests pass.".into(),
        ));
        let body = json!({
            "model": MODEL,
            "max_tokens": 512,
            "system": [{"type": "text", "text": CLIENT_SYSTEM, "cache_control": {"type": "ephemeral"}}],
            "messages": messages,
        });
        let headers = [
            ("content-type", "application/json"),
            ("x-api-key", "sk-ltm-bench"),
            ("anthropic-version", "2023-06-01"),
            ("x-claude-code-session-id", self.session.as_str()),
            ("x-lore-project", self.project),
        ];
        let response = http_client::post_json(&self.base, "/v1/messages", &headers, &body);
        if response.status != 200 {
            bail!("turn refused ({}): {}", response.status, response.text());
        }
        let reply = response.json();
        self.history
            .push(json!({"role": "assistant", "content": reply["content"].clone()}));
        Ok(reply)
    }
}

fn chat<'a>(
    gateway: &LoreProcess,
    upstream: &'a FakeUpstream,
    session: &str,
    project: &'a str,
) -> Chat<'a> {
    Chat {
        base: gateway.base(),
        upstream,
        session: session.into(),
        project,
        history: Vec::new(),
    }
}

fn spawn(
    lore: &Path,
    dir: &Path,
    upstream: &FakeUpstream,
    ltm: &str,
) -> anyhow::Result<LoreProcess> {
    std::fs::create_dir_all(dir)?;
    let url = upstream.url();
    let gateway = LoreProcess::spawn(
        lore,
        dir,
        "gateway.log",
        &[
            ("LORE_UPSTREAM_ANTHROPIC", url.as_str()),
            ("LORE_MEMORY", "on"),
            ("LORE_IDLE_TIMEOUT", "0.3"),
            ("LORE_MEMORY_RETRY_AFTER", "0.3"),
            ("LORE_EMBEDDINGS", "off"),
            ("LORE_CARDS", "off"),
            ("LORE_LTM", ltm),
        ],
    )?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if http_client::request(&gateway.base(), "GET", "/health", &[], b"")
            .is_ok_and(|r| r.status == 200)
        {
            return Ok(gateway);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    bail!("the gateway did not answer /health: {}", gateway.log_tail())
}

fn fake() -> FakeUpstream {
    FakeUpstream::start_with(FakeConfig {
        extractive_curator: true,
        ..FakeConfig::default()
    })
}

/// The project's knowledge entries as JSON text.
fn knowledge_text(gateway: &LoreProcess, project: &str) -> String {
    http_client::get(
        &gateway.base(),
        &format!("/api/v1/knowledge?project={project}"),
        &[],
    )
    .text()
}

/// Session one: each convention said in passing between unrelated work; then quiet until the
/// curator has them all (or a minute has passed). Answers how many were curated and how long
/// that took from the last turn.
fn teach(gateway: &LoreProcess, upstream: &FakeUpstream) -> anyhow::Result<(usize, f64)> {
    let mut teacher = chat(gateway, upstream, "ltm-bench-teacher", PROJECT);
    for (n, (rule, _, _)) in CONVENTIONS.iter().enumerate() {
        teacher.turn(&format!(
            "Refactor the invoice exporter in src/export_{n}.rs so the totals add up."
        ))?;
        teacher.turn(&format!(
            "{rule} Also look at the flaky test in tests/export_{n}.rs."
        ))?;
    }
    let start = Instant::now();
    let deadline = start + Duration::from_secs(60);
    loop {
        let text = knowledge_text(gateway, PROJECT);
        let curated = CONVENTIONS
            .iter()
            .filter(|(_, token, _)| text.contains(token))
            .count();
        if curated == CONVENTIONS.len() || Instant::now() > deadline {
            return Ok((curated, start.elapsed().as_secs_f64()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The system blocks Lore added (all but the client's own).
fn added_system(body: &Value) -> Vec<Value> {
    body["system"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["text"] != CLIENT_SYSTEM)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn count_tokens_in(text: &str) -> usize {
    CONVENTIONS
        .iter()
        .filter(|(_, token, _)| text.contains(token))
        .count()
}

/// The first request of a fresh session of `project`: how many conventions it carries, and the
/// tokens (the fake's count, four characters a token) of the blocks Lore added.
fn first_prompt(
    gateway: &LoreProcess,
    upstream: &FakeUpstream,
    session: &str,
    project: &str,
) -> anyhow::Result<(usize, u64)> {
    upstream.clear_requests();
    chat(gateway, upstream, session, project).turn("What should I look at first today?")?;
    let body = upstream
        .conversation_bodies()
        .pop()
        .context("no conversation request reached the fake")?;
    let added: String = added_system(&body)
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    Ok((
        count_tokens_in(&body["system"].to_string()),
        (added.len() as u64).div_ceil(4),
    ))
}

/// The push measurement.
pub fn push(lore: &Path, work: &Path) -> anyhow::Result<Push> {
    let upstream = fake();
    let dir = work.join("push");
    let gateway = spawn(lore, &dir, &upstream, "on")?;
    let (curated, seconds) = teach(&gateway, &upstream)?;
    let (in_first_prompt, tokens_added) =
        first_prompt(&gateway, &upstream, "ltm-bench-fresh", PROJECT)?;
    let (in_other_project, _) =
        first_prompt(&gateway, &upstream, "ltm-bench-other", OTHER_PROJECT)?;
    // The recall engine alone: the question a user would ask, top 5 of the project.
    let mut recall_top5 = 0;
    for (_, token, question) in CONVENTIONS {
        let path = format!(
            "/api/v1/recall?q={}&project={PROJECT}&limit=5",
            lore_test_support::lore_process::encode(question)
        );
        if http_client::get(&gateway.base(), &path, &[])
            .text()
            .contains(token)
        {
            recall_top5 += 1;
        }
    }
    gateway.stop()?;
    // The same store without the push.
    let gateway = spawn(lore, &dir, &upstream, "off")?;
    let (in_first_prompt_ltm_off, _) = first_prompt(&gateway, &upstream, "ltm-bench-off", PROJECT)?;
    gateway.stop()?;
    Ok(Push {
        conventions: CONVENTIONS.len(),
        curated,
        in_first_prompt,
        in_other_project,
        tokens_added,
        in_first_prompt_ltm_off,
        recall_top5,
        seconds_to_curate: seconds,
    })
}

/// A 30-turn session of the project with `LORE_LTM=ltm`, its topic moving across the
/// conventions, a new entry about what the session is doing imported before turn 16.
pub fn cache(lore: &Path, work: &Path, ltm: &str) -> anyhow::Result<Cache> {
    let upstream = fake();
    let gateway = spawn(lore, &work.join(format!("cache-{ltm}")), &upstream, ltm)?;
    teach(&gateway, &upstream)?;
    upstream.clear_requests();
    let observed = upstream.cache_observations().len();
    let mut session = chat(&gateway, &upstream, "ltm-bench-thirty", PROJECT);
    let topics = [
        "module names",
        "money amounts",
        "migrations",
        "integration tests",
        "feature flags",
        "timestamps",
    ];
    for turn in 0..30 {
        if turn == 15 {
            let export = http_client::get(
                &gateway.base(),
                &format!("/api/v1/knowledge/export?project={PROJECT}"),
                &[],
            )
            .text();
            let changed = format!(
                "{export}\n## Gotchas\n\n### Integration tests need the fixtures database\nThe integration tests in tests/it_*.rs fail against src/ledger files unless the fixtures database is up: run scripts/fixtures first.\n"
            );
            let headers = [("x-lore-request", "1"), ("content-type", "text/markdown")];
            let response = http_client::request(
                &gateway.base(),
                "POST",
                &format!("/api/v1/knowledge/import?project={PROJECT}"),
                &headers,
                changed.as_bytes(),
            )?;
            if response.status != 200 {
                bail!("knowledge import refused: {}", response.text());
            }
        }
        let topic = topics[turn % topics.len()];
        session.turn(&format!(
            "Step {turn}: check the {topic} in src/ledger_{turn}.rs against our conventions and fix what is off."
        ))?;
    }
    let bodies = upstream.conversation_bodies();
    let mut versions: Vec<String> = Vec::new();
    let mut deltas = 0;
    for body in &bodies {
        let added = added_system(body);
        if let Some(text) = added.get(1).and_then(|b| b["text"].as_str())
            && versions.last().map(String::as_str) != Some(text)
        {
            versions.push(text.to_string());
        }
        let text = body["messages"].to_string();
        deltas = deltas.max(
            text.matches("[Lore: an update of the long-term knowledge")
                .count(),
        );
    }
    let (mut read, mut prompt, mut busts) = (0u64, 0u64, 0usize);
    for o in upstream.cache_observations().iter().skip(observed) {
        let total = o.input_tokens + o.cache_read + o.cache_creation;
        read += o.cache_read;
        prompt += total;
        if o.cache_creation * 2 > total {
            busts += 1;
        }
    }
    gateway.stop()?;
    Ok(Cache {
        mode: ltm.into(),
        turns: bodies.len(),
        read_share: if prompt == 0 {
            0.0
        } else {
            read as f64 / prompt as f64
        },
        busts,
        system2_versions: versions.len(),
        deltas,
    })
}

/// The Markdown of both measurements.
pub fn report(push: &Push, cache: &[Cache]) -> String {
    let mut out = format!(
        "### Cross-session push ({n} conventions said in passing in session 1; the fake's extractive curator)\n\n\
         | | figure |\n|---|---|\n\
         | conventions curated into knowledge | {curated}/{n} ({secs:.1} s after the last turn) |\n\
         | in session 2's first prompt (same project, `LORE_LTM=on`) | **{first}/{n}**, no tool call |\n\
         | tokens Lore added to that prompt (system[1] + system[2]) | {tokens} |\n\
         | in a first prompt of another project | {other}/{n} |\n\
         | in session 2's first prompt with `LORE_LTM=off` | {off}/{n} |\n\
         | found by the recall engine alone (top 5 for the user's question) | {recall}/{n}, each one tool round trip the model must choose to make |\n\n",
        n = push.conventions,
        curated = push.curated,
        secs = push.seconds_to_curate,
        first = push.in_first_prompt,
        tokens = push.tokens_added,
        other = push.in_other_project,
        off = push.in_first_prompt_ltm_off,
        recall = push.recall_top5,
    );
    out.push_str(
        "### Cache over a 30-turn session while knowledge changes (an entry imported before turn 16)\n\n\
         | system[2] | turns | cache-read share | busts | system[2] versions sent | deltas |\n|---|---|---|---|---|---|\n",
    );
    for c in cache {
        let mode = if c.mode == "on" {
            "pinned (`LORE_LTM=on`)"
        } else {
            "searched every turn (`LORE_LTM=each-turn`)"
        };
        out.push_str(&format!(
            "| {mode} | {} | {:.1} % | {} | {} | {} |\n",
            c.turns,
            c.read_share * 100.0,
            c.busts,
            c.system2_versions,
            c.deltas
        ));
    }
    out
}
