//! Unlabelled filler: endless, varied coding conversations that scale a data directory to 10k
//! or 100k messages. Each filler session invents a project (name, language, files, functions,
//! commands, libraries) from word pools, so BM25 sees a realistic spread of rare and common
//! terms, and one message in five states a fact-shaped sentence with random values (ports,
//! versions, settings), the kind of near-miss a labelled question has to beat at scale.

use super::questions::capitalise;
use super::sessions::{BASE_MS, Rng, Session, Turn, Vocab, chatter, intro, role_at, session_id};

const PREFIXES: &[&str] = &[
    "amber", "basalt", "cinder", "delta", "ember", "fjord", "granite", "harbor", "indigo",
    "juniper", "kestrel", "lumen", "meadow", "nimbus", "onyx", "pebble", "quartz", "raven",
    "sable", "tundra", "umber", "vertex", "willow", "zephyr", "copper", "lattice", "orbit",
];
const SUFFIXES: &[&str] = &[
    "api", "desk", "hub", "sync", "vault", "relay", "forge", "works", "scope", "pipe", "board",
    "kit", "flow", "mint", "post", "stack", "track", "yard", "lens", "loop",
];
const DOMAINS: &[&str] = &[
    "billing service",
    "internal admin tool",
    "log shipping agent",
    "recommendation API",
    "inventory tracker",
    "customer support portal",
    "feature flag service",
    "PDF report renderer",
    "geocoding proxy",
    "notification fan-out worker",
    "document OCR pipeline",
    "HR onboarding app",
    "warehouse robot controller",
    "survey builder",
    "parking sensor backend",
    "podcast host",
    "A/B testing platform",
    "expense scanner",
    "calendar sync bridge",
    "metrics rollup job",
];
const DIRS: &[&str] = &[
    "src", "lib", "internal", "pkg", "app", "core", "services", "handlers", "jobs", "util", "api",
    "domain", "infra", "cmd", "web",
];
const NOUNS: &[&str] = &[
    "invoice", "tenant", "cursor", "batch", "quota", "ticket", "widget", "upload", "report",
    "schedule", "webhook", "profile", "session", "ledger", "cache", "route", "token", "export",
    "import", "digest", "audit", "shard", "snapshot", "bucket", "policy", "template", "locale",
    "avatar", "comment", "thread", "payload", "manifest", "receipt", "voucher", "mailbox",
    "sensor", "reading", "alert", "budget", "catalog", "carrier", "parcel", "shipment", "survey",
    "answer", "coupon", "plan", "seat", "license", "device", "firmware", "job", "queue",
];
const VERBS: &[&str] = &[
    "load",
    "parse",
    "validate",
    "render",
    "sync",
    "merge",
    "flush",
    "fetch",
    "store",
    "build",
    "resolve",
    "normalize",
    "encode",
    "decode",
    "schedule",
    "retry",
    "archive",
    "compact",
    "dispatch",
    "reconcile",
    "refresh",
    "emit",
    "collect",
    "prune",
    "expand",
    "index",
];
/// Language: file extension, test and build commands, libraries.
const LANGS: &[(&str, &[&str], &[&str])] = &[
    (
        "rs",
        &[
            "cargo test",
            "cargo build --release",
            "cargo clippy --all-targets",
        ],
        &["serde", "tokio", "reqwest", "anyhow", "rayon", "hyper"],
    ),
    (
        "py",
        &["pytest -q", "ruff check .", "mypy --strict ."],
        &[
            "requests",
            "pydantic",
            "SQLAlchemy",
            "httpx",
            "attrs",
            "click",
        ],
    ),
    (
        "ts",
        &["npm test", "npx tsc --noEmit", "npm run lint"],
        &["zod", "express", "lodash", "axios", "date-fns", "pino"],
    ),
    (
        "go",
        &["go test ./...", "go vet ./...", "golangci-lint run"],
        &["cobra", "viper", "pgx", "gin", "zap", "testify"],
    ),
    (
        "java",
        &["./mvnw test", "./mvnw package", "./gradlew check"],
        &[
            "Spring Boot",
            "Hibernate",
            "JUnit",
            "Jackson",
            "Guava",
            "Micrometer",
        ],
    ),
    (
        "rb",
        &[
            "bundle exec rspec",
            "bundle exec rubocop",
            "bin/rails db:migrate",
        ],
        &["Rails", "Sidekiq", "RSpec", "Devise", "Puma", "Nokogiri"],
    ),
];
const REASONS: &[&str] = &[
    "the old value was a guess from last year",
    "staging kept timing out under the load test",
    "the vendor changed their limits again",
    "the defaults were too aggressive for the small instances",
    "support asked for it after the last incident",
    "it keeps the dashboards readable",
    "the upstream release notes flagged a regression",
    "memory use doubled with the previous setting",
    "two teams depend on the current behaviour",
    "we want to revisit it after the migration",
];
const CHANGES: &[&str] = &[
    "adding an index on the foreign key",
    "caching the lookups for a minute",
    "streaming the response instead of buffering it",
    "removing an N+1 query",
    "moving the work to a background job",
    "reusing the HTTP client",
];

/// Generates filler sessions until `messages` messages have been produced.
#[derive(Debug)]
pub struct Filler {
    rng: Rng,
    remaining: usize,
    index: u64,
}

impl Filler {
    /// Filler worth `messages` messages from `seed`.
    pub fn new(seed: u64, messages: usize) -> Self {
        Self {
            rng: Rng::new(seed),
            remaining: messages,
            index: 0,
        }
    }

    fn vocab(&mut self) -> Vocab {
        let rng = &mut self.rng;
        let (ext, cmds, libs) = *rng.pick(LANGS);
        let mut files: Vec<String> = (0..6)
            .map(|_| {
                format!(
                    "{}/{}_{}.{ext}",
                    rng.pick(DIRS),
                    rng.pick(NOUNS),
                    rng.pick(NOUNS)
                )
            })
            .collect();
        files.dedup();
        let funcs = (0..6)
            .map(|_| format!("{}_{}", rng.pick(VERBS), rng.pick(NOUNS)))
            .collect();
        let entities = (0..4)
            .map(|_| {
                format!(
                    "the {} {}",
                    rng.pick(NOUNS),
                    rng.pick(&[
                        "worker",
                        "cache",
                        "endpoint",
                        "migration",
                        "client",
                        "scheduler"
                    ])
                )
            })
            .collect();
        Vocab {
            name: format!("{}{}", rng.pick(PREFIXES), rng.pick(SUFFIXES)),
            domain: rng.pick(DOMAINS).to_string(),
            files,
            funcs,
            cmds: cmds.iter().map(|c| c.to_string()).collect(),
            libs: libs.iter().map(|l| l.to_string()).collect(),
            entities,
        }
    }

    /// A fact-shaped sentence with random values.
    fn near_miss(&mut self, vocab: &Vocab) -> String {
        let rng = &mut self.rng;
        let file = rng.pick(&vocab.files).clone();
        let lib = rng.pick(&vocab.libs).clone();
        let reason = *rng.pick(REASONS);
        match rng.below(6) {
            0 => format!(
                "Set {}_{} = {} in {file}: {reason}.",
                rng.pick(NOUNS),
                rng.pick(&["limit", "size", "timeout_ms", "workers", "ttl"]),
                2 + rng.below(5000)
            ),
            // Ports 20000-29999: no labelled port starts with a 2, so no evidence is repeated.
            1 => format!(
                "Done. The {} {} now listens on {}; {reason}.",
                rng.pick(NOUNS),
                rng.pick(&["service", "exporter", "admin API", "worker"]),
                20_000 + rng.below(10_000)
            ),
            2 => format!(
                "Heads-up: {lib} pinned to {}.{}.{}; {reason}.",
                rng.below(8),
                rng.below(40),
                rng.below(20)
            ),
            3 => format!(
                "{} went from {} ms to {} ms after {}.",
                capitalise(rng.pick(&vocab.funcs).as_str()),
                200 + rng.below(3000),
                5 + rng.below(190),
                rng.pick(CHANGES)
            ),
            4 => format!(
                "We replaced the hand-written {} code with {lib} because {reason}.",
                rng.pick(NOUNS)
            ),
            _ => format!(
                "Moved the {} helpers out of {file} into {}; {reason}.",
                rng.pick(NOUNS),
                rng.pick(&vocab.files)
            ),
        }
    }
}

impl Iterator for Filler {
    type Item = Session;

    fn next(&mut self) -> Option<Session> {
        if self.remaining == 0 {
            return None;
        }
        let vocab = self.vocab();
        let count = (20 + self.rng.below(21)).min(self.remaining);
        self.remaining -= count;
        // Filler sessions spread over the year before the labelled ones.
        let started = BASE_MS - 400 * 86_400_000 + self.index * 3_000_000;
        self.index += 1;
        let id = session_id(started, &mut self.rng);
        let mut at_ms = started;
        let mut turns = Vec::with_capacity(count);
        for position in 0..count {
            let role = role_at(position);
            let (text, command) = if position == 0 {
                (intro(&vocab, &mut self.rng), None)
            } else if self.rng.below(5) == 0 {
                (self.near_miss(&vocab), None)
            } else {
                chatter(role, &vocab, &mut self.rng)
            };
            turns.push(Turn {
                role,
                text,
                command,
                tool_output: None,
                at_ms,
            });
            at_ms += 15_000 + self.rng.below(90_000) as u64;
        }
        let project = format!("/home/dev/{}", vocab.name);
        Some(Session {
            id,
            project,
            model: "claude-sonnet-4-5".into(),
            turns,
        })
    }
}
