//! A seeded data directory for the dashboard's tests and benchmark: sessions with realistic
//! conversations (text, tool calls and results, replies with growing prompt and cache usage,
//! a fork now and then), observation logs, knowledge entries (some with history), entities
//! with aliases and relations, the cost ledger (conversation turns per session, worker calls,
//! throttle counters: [`costs`]) and a few cards. Written through `lore-storage` before a
//! gateway opens the directory; deterministic for a given plan, except that the cost ledger is
//! dated from the day of seeding backwards (the costs page shows the days ending today).
//! Replies of the first two turns of each session carry no context layer (as a build before
//! layers were recorded wrote them); later ones climb from layer 0 to 2.

mod costs;

use std::path::Path;

use anyhow::Context;
use lore_proto::{Message, Part, Role, Usage};
use lore_storage::memory::{
    Alias, Category, DistillState, Distillation, Entity, KnowledgeEntry, Relation, day_of,
};
use lore_storage::records::RECORD_VERSION;
use lore_storage::{
    ForkRecord, MessageSource, PathEntry, SessionRecord, Store, StoredMessage, Vault,
};

/// How much to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Sessions.
    pub sessions: usize,
    /// Messages per session (user and assistant alternate).
    pub messages_per_session: usize,
    /// Projects the sessions are spread over.
    pub projects: usize,
    /// Knowledge entries.
    pub knowledge: usize,
    /// Entities.
    pub entities: usize,
}

impl Plan {
    /// A small directory for tests: 6 sessions of 12 messages over 2 projects.
    pub const SMALL: Plan = Plan {
        sessions: 6,
        messages_per_session: 12,
        projects: 2,
        knowledge: 8,
        entities: 5,
    };
    /// The benchmark's: 1,000 sessions of 100 messages (100,000 messages) over 20 projects.
    pub const BENCH: Plan = Plan {
        sessions: 1_000,
        messages_per_session: 100,
        projects: 20,
        knowledge: 500,
        entities: 200,
    };
}

/// What was written, for tests to look up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seeded {
    /// Session ids, the first one has a fork and a tool call.
    pub sessions: Vec<String>,
    /// Project paths.
    pub projects: Vec<String>,
    /// Knowledge ids; the first has two versions.
    pub knowledge: Vec<String>,
    /// Entity ids.
    pub entities: Vec<String>,
    /// Messages written.
    pub messages: usize,
    /// Distillations written.
    pub distillations: usize,
}

/// A fixed start time (2026-11-01 00:00 UTC) so seeded pages look the same on every run.
pub const START_MS: u64 = 1_793_491_200_000;

/// The project path of project `n`.
pub fn project_path(n: usize) -> String {
    format!("/home/dev/project-{n:02}")
}

fn stored(
    session: &str,
    seq: u64,
    position: u32,
    message: Message,
    reply: Option<Usage>,
    layer: Option<u8>,
    at: u64,
) -> StoredMessage {
    StoredMessage {
        version: RECORD_VERSION,
        session_id: session.to_string(),
        seq,
        position,
        identity: message.identity(),
        message,
        source: if reply.is_some() {
            MessageSource::Response
        } else {
            MessageSource::Request
        },
        created_at_ms: at,
        model: reply.map(|_| "claude-sonnet-4-5".to_string()),
        usage: reply,
        partial: false,
        context_layer: layer,
    }
}

fn user_text(session: usize, turn: usize) -> String {
    format!(
        "Session {session} turn {turn}: please look at the payment retry logic in src/billing/retry.rs and explain why the backoff for invoice {turn}{session} doubles twice."
    )
}

fn assistant_parts(session: usize, turn: usize) -> Vec<Part> {
    let mut parts = vec![Part::Text {
        text: format!(
            "The retry loop in turn {turn} of session {session} multiplies the delay before checking the cap, so the second attempt waits four times the base. Moving the cap check first fixes it."
        ),
    }];
    if turn % 3 == 1 {
        let id = format!("toolu_{session}_{turn}");
        parts.push(Part::ToolCall {
            id: id.clone(),
            name: "read_file".into(),
            arguments: format!("{{\"path\":\"src/billing/retry.rs\",\"line\":{turn}}}"),
        });
    }
    parts
}

/// Seeds `data_dir` (its `db/`) and, with `vault`, a few cards.
pub fn seed(data_dir: &Path, plan: Plan, vault: Option<&Path>) -> anyhow::Result<Seeded> {
    let store = Store::open(&data_dir.join("db")).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut seeded = Seeded {
        projects: (0..plan.projects.max(1)).map(project_path).collect(),
        ..Seeded::default()
    };
    for s in 0..plan.sessions {
        let id = format!(
            "{:016x}{:016x}",
            0x0190_0000_0000_0000u64 + s as u64,
            s as u64 * 7919
        );
        let created = START_MS + s as u64 * 60_000;
        let mut record = SessionRecord::new(id.clone());
        record.created_at_ms = created;
        record.project = Some(seeded.projects[s % seeded.projects.len()].clone());
        record.model = Some("claude-sonnet-4-5".into());
        record.protocol = Some(lore_proto::Protocol::Anthropic);
        let mut messages = Vec::with_capacity(plan.messages_per_session + 2);
        let mut prompt = 1_200u64;
        for position in 0..plan.messages_per_session {
            let turn = position / 2;
            let at = created + position as u64 * 5_000;
            let layer = (position % 2 == 1 && turn >= 2).then(|| ((turn - 2) / 2).min(2) as u8);
            let (message, usage) = if position % 2 == 0 {
                let mut parts = vec![Part::Text {
                    text: user_text(s, turn),
                }];
                if turn % 3 == 2 {
                    parts.insert(0, Part::ToolResult {
                        call_id: format!("toolu_{s}_{}", turn - 1),
                        content: format!("fn retry(attempt: u32) -> Duration {{\n    // line {turn}\n    base * 2u32.pow(attempt)\n}}"),
                        is_error: false,
                    });
                }
                (Message::new(Role::User, parts), None)
            } else {
                let written = 300 + (turn as u64 % 4) * 50;
                let usage = Usage {
                    input_tokens: 40 + (turn as u64 % 5) * 10,
                    output_tokens: 120 + (turn as u64 % 7) * 15,
                    cache_read_input_tokens: prompt.saturating_sub(written),
                    cache_creation_input_tokens: written,
                };
                record.usage.input_tokens += usage.input_tokens;
                record.usage.output_tokens += usage.output_tokens;
                record.usage.cache_read_input_tokens += usage.cache_read_input_tokens;
                record.usage.cache_creation_input_tokens += usage.cache_creation_input_tokens;
                prompt += 450;
                (
                    Message::new(Role::Assistant, assistant_parts(s, turn)),
                    Some(usage),
                )
            };
            messages.push(stored(
                &id,
                position as u64,
                position as u32,
                message,
                usage,
                layer,
                at,
            ));
        }
        record.path = messages
            .iter()
            .map(|m| PathEntry {
                seq: m.seq,
                identity: m.identity,
                tokens: 0,
            })
            .collect();
        record.next_seq = messages.len() as u64;
        record.turns = (plan.messages_per_session / 2) as u64;
        if s == 0 && messages.len() >= 4 {
            // The client regenerated its last reply: the old one stays stored, off the path.
            let replaced = stored(
                &id,
                record.next_seq,
                (messages.len() - 1) as u32,
                Message::new(
                    Role::Assistant,
                    vec![Part::Text {
                        text: "An earlier answer the client regenerated: the cap is applied twice."
                            .into(),
                    }],
                ),
                None,
                None,
                created + 1_000,
            );
            record.forks.push(ForkRecord {
                at_position: replaced.position,
                replaced_seqs: vec![replaced.seq],
                created_at_ms: created + 2_000,
            });
            record.next_seq += 1;
            messages.push(replaced);
        }
        record.updated_at_ms = created + plan.messages_per_session as u64 * 5_000;
        store
            .commit_turn(&record, &messages)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        costs::seed_session(&store, &record, &messages, s)?;
        seeded.messages += messages.len();
        let logs: Vec<Distillation> = (0..2u64)
            .map(|n| Distillation {
                session_id: id.clone(),
                n,
                project: record.project.clone(),
                observations: format!("* {}: user asked about invoice retries (part {n}); the backoff doubles before the cap check.", day_of(created)),
                generation: 0,
                source_seqs: (0..5).collect(),
                consumed: vec![],
                source_tokens: 2_000,
                tokens: 120,
                archived: false,
                model: Some("claude-haiku-4-5".into()),
                created_at_ms: created + 100_000 + n,
            })
            .collect();
        let state = DistillState {
            next_seq: 10,
            next_n: 2,
            ..DistillState::default()
        };
        store
            .commit_distillations(&id, &state, &logs)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        seeded.distillations += logs.len();
        seeded.sessions.push(id);
    }
    seed_memory(&store, plan, &mut seeded)?;
    if let Some(vault) = vault {
        seed_cards(vault)?;
    }
    store.flush().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(seeded)
}

fn seed_memory(store: &Store, plan: Plan, seeded: &mut Seeded) -> anyhow::Result<()> {
    let err = |e: lore_storage::StorageError| anyhow::anyhow!("{e}");
    for k in 0..plan.knowledge {
        let id = format!("0190aaaa-0000-7000-8000-{k:012}");
        let entry = KnowledgeEntry {
            id: id.clone(),
            version: 1,
            project: if k % 4 == 3 {
                None
            } else {
                Some(seeded.projects[k % seeded.projects.len()].clone())
            },
            category: Category::ALL[k % Category::ALL.len()],
            title: format!("Retry backoff rule number {k}"),
            content: format!(
                "Cap the delay before doubling it; rule {k} came from the invoice incident."
            ),
            confidence: 0.8,
            source_session: seeded.sessions.first().cloned(),
            updated_by: "curator".into(),
            created_at_ms: START_MS + k as u64,
            updated_at_ms: START_MS + k as u64,
            deleted: false,
        };
        store.save_knowledge(&entry).map_err(err)?;
        if k == 0 {
            let second = KnowledgeEntry {
                version: 2,
                content: "Cap the delay before doubling it, and never wait more than 8 s; rule 0 came from the invoice incident.".into(),
                updated_at_ms: START_MS + 10_000,
                ..entry
            };
            store.save_knowledge(&second).map_err(err)?;
        }
        seeded.knowledge.push(id);
    }
    let ids: Vec<String> = (0..plan.entities)
        .map(|e| format!("0190eeee-0000-7000-8000-{e:012}"))
        .collect();
    for (e, id) in ids.iter().enumerate() {
        let entity = Entity {
            id: id.clone(),
            project: None,
            entity_type: ["person", "service", "tool", "repo", "infra"][e % 5].into(),
            canonical_name: format!("entity-{e}"),
            aliases: vec![Alias {
                kind: "nickname".into(),
                value: format!("e{e}"),
            }],
            description: format!("Seeded entity number {e}."),
            relations: if e > 0 {
                vec![Relation {
                    other: ids[e - 1].clone(),
                    relation: "uses".into(),
                }]
            } else {
                vec![]
            },
            updated_at_ms: START_MS + e as u64,
        };
        store.save_entity(&entity).map_err(err)?;
    }
    seeded.entities = ids;
    costs::seed_ledger(store)?;
    Ok(())
}

/// The cards of a seeded vault.
pub const CARDS: [(&str, &str); 2] = [
    (
        "people/Priya.md",
        "---\nkind: people\ntitle: Priya\nkeywords: [Priya, billing lead]\n---\n## who\nPriya leads the billing team and owns the retry service.\n\n## stance\nWants every backoff capped.\n\n## recent\nShipped the invoice fix.\n\n## impression\nPrecise.\n\n## correspondence\nDraft reply about the rollout, never injected.\n",
    ),
    (
        "things/retry service.md",
        "---\nkind: thing\ntitle: retry service\nkeywords: [retry service]\n---\n## what\nThe service that re-sends failed payments.\n\n## usage\nCalled by billing.\n\n## recent\nBackoff fixed in November.\n",
    ),
];

fn seed_cards(vault: &Path) -> anyhow::Result<()> {
    let vault = Vault::new(vault);
    for (path, text) in CARDS {
        vault
            .write_file(Path::new(path), text)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("write the card {path}"))?;
    }
    Ok(())
}
