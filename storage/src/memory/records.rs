//! What the memory trees hold. MessagePack with named fields, like every other record, so
//! fields can be added later with `#[serde(default)]`.

use serde::{Deserialize, Serialize};

/// One observation log (generation 0) or a consolidation of several (generation ≥ 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distillation {
    /// Session it distils.
    pub session_id: String,
    /// Position among the session's distillations, from 0.
    pub n: u64,
    /// Project of the session when it was written.
    #[serde(default)]
    pub project: Option<String>,
    /// The observation lines (or, for a meta-distillation, the consolidated working context).
    pub observations: String,
    /// 0 for an observation log of messages, > 0 for a consolidation.
    pub generation: u32,
    /// Message sequence numbers it was written from (generation 0).
    #[serde(default)]
    pub source_seqs: Vec<u64>,
    /// Distillations it consolidates (generation ≥ 1), by `n`.
    #[serde(default)]
    pub consumed: Vec<u64>,
    /// Estimated tokens of the source.
    pub source_tokens: u64,
    /// Estimated tokens of the observations.
    pub tokens: u64,
    /// True once a consolidation has folded it in: out of the context prefix, still searchable.
    #[serde(default)]
    pub archived: bool,
    /// Worker model that wrote it.
    #[serde(default)]
    pub model: Option<String>,
    /// When it was written, ms since the epoch.
    pub created_at_ms: u64,
}

impl Distillation {
    /// The search document id: `d:<session>:<n>`.
    pub fn doc_id(&self) -> String {
        format!("d:{}:{}", self.session_id, self.n)
    }
}

/// The Distiller's cursors for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistillState {
    /// Messages with a lower `seq` are distilled (or were judged too small to need it).
    pub next_seq: u64,
    /// `n` of the next distillation.
    pub next_n: u64,
    /// Distillations with a lower `n` have been shown to the curator.
    #[serde(default)]
    pub curated_through_n: u64,
    /// Messages whose observer output was rejected (expanding instead of compressing).
    #[serde(default)]
    pub rejected: u64,
    /// No consolidation before this many distillations exist (set when one was given up).
    #[serde(default)]
    pub consolidate_after_n: u64,
}

/// The five kinds of long-term knowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A choice made, with the alternative rejected and why.
    Decision,
    /// A recurring way of doing things in this codebase.
    Pattern,
    /// How the user wants things done.
    Preference,
    /// How the system is built.
    Architecture,
    /// A trap, and why it looks correct.
    Gotcha,
}

impl Category {
    /// Every category, in the order `.lore.md` lists them.
    pub const ALL: [Category; 5] = [
        Category::Decision,
        Category::Pattern,
        Category::Preference,
        Category::Architecture,
        Category::Gotcha,
    ];

    /// The stored and displayed name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Decision => "decision",
            Category::Pattern => "pattern",
            Category::Preference => "preference",
            Category::Architecture => "architecture",
            Category::Gotcha => "gotcha",
        }
    }

    /// Reads a name, case-insensitively; plural forms are accepted.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        let name = name.strip_suffix('s').unwrap_or(&name);
        Category::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// One long-term knowledge entry, at its current version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeEntry {
    /// Stable id (a UUIDv7), kept across versions.
    pub id: String,
    /// 1 for a new entry, +1 for every change.
    pub version: u32,
    /// Project path; `None` for an entry that holds in every project.
    pub project: Option<String>,
    /// What kind of knowledge it is.
    pub category: Category,
    /// Specific, searchable title (at most 120 characters): the dedup key.
    pub title: String,
    /// The knowledge itself (at most 1,200 characters).
    pub content: String,
    /// 0.0–1.0: 1.0 an absolute directive, 0.9 explicit, 0.8 inferred, 0.6 a mild signal.
    pub confidence: f32,
    /// Session it was learnt in.
    #[serde(default)]
    pub source_session: Option<String>,
    /// Who wrote this version: `curator`, `import` or `user`.
    pub updated_by: String,
    /// When the entry was created, ms since the epoch.
    pub created_at_ms: u64,
    /// When this version was written.
    pub updated_at_ms: u64,
    /// True once forgotten; kept so history and exports stay consistent.
    #[serde(default)]
    pub deleted: bool,
}

impl KnowledgeEntry {
    /// The search document id: `k:<id>`.
    pub fn doc_id(&self) -> String {
        format!("k:{}", self.id)
    }
}

/// Another name an entity goes by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alias {
    /// `name`, `email`, `github`, `slack`, `nickname`, `url` or `domain`.
    pub kind: String,
    /// The alias itself.
    pub value: String,
}

/// A typed edge to another entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    /// Id of the other entity.
    pub other: String,
    /// `colleague`, `manager`, `collaborator`, … as the curator names it.
    pub relation: String,
}

/// A person, organisation, service, tool, repository or piece of infrastructure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    /// Stable id (a UUIDv7).
    pub id: String,
    /// Project path; `None` when it is known everywhere.
    pub project: Option<String>,
    /// `person`, `org`, `service`, `tool`, `repo` or `infra`.
    pub entity_type: String,
    /// The name it is known by.
    pub canonical_name: String,
    /// Other names.
    #[serde(default)]
    pub aliases: Vec<Alias>,
    /// One line saying what it is.
    #[serde(default)]
    pub description: String,
    /// Edges to other entities.
    #[serde(default)]
    pub relations: Vec<Relation>,
    /// When it was last changed.
    pub updated_at_ms: u64,
}

impl Entity {
    /// The search document id: `e:<id>`.
    pub fn doc_id(&self) -> String {
        format!("e:{}", self.id)
    }
}

/// What a worker call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerBucket {
    /// Observation logs and their consolidation.
    Distillation,
    /// Long-term knowledge.
    Curation,
    /// Query rephrasings for recall.
    QueryExpansion,
}

impl WorkerBucket {
    /// Every bucket.
    pub const ALL: [WorkerBucket; 3] = [
        WorkerBucket::Distillation,
        WorkerBucket::Curation,
        WorkerBucket::QueryExpansion,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerBucket::Distillation => "distillation",
            WorkerBucket::Curation => "curation",
            WorkerBucket::QueryExpansion => "query_expansion",
        }
    }
}

/// Worker usage summed over calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// Calls that got an answer.
    pub calls: u64,
    /// Calls that failed after their retries.
    pub failures: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// Cost in US dollars at the prices the worker client knows.
    pub cost_usd: f64,
}

impl UsageTotals {
    /// Adds `other` to these totals.
    pub fn add(&mut self, other: &UsageTotals) {
        self.calls += other.calls;
        self.failures += other.failures;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cost_usd += other.cost_usd;
    }
}
