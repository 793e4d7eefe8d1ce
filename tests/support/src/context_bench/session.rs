//! The generated coding session of the context benchmark: user turns, each with tool
//! exchanges whose outputs look like a real agent's (listings, source, test runs, compiler
//! errors), and twelve facts stated in passing in the first turns, each with a token that shows
//! whether the model can still see it.

use serde_json::{Value, json};

/// A fact stated early, and the exact token that proves it is in view.
pub struct Fact {
    /// The sentence the user says.
    pub sentence: &'static str,
    /// A string only that sentence (and what kept it) contains.
    pub token: &'static str,
}

/// The planted facts, one per early turn.
pub const FACTS: [Fact; 12] = [
    Fact {
        sentence: "By the way, the staging database listens on port 6543, not the default.",
        token: "6543",
    },
    Fact {
        sentence: "Remember that we pin serde to 1.0.219 because 1.0.220 broke our derive.",
        token: "1.0.219",
    },
    Fact {
        sentence: "The flaky test is ledger_race_7 — it fails when the clock crosses midnight.",
        token: "ledger_race_7",
    },
    Fact {
        sentence: "Never run migrations with the --force-unsafe flag; it skipped the backup once.",
        token: "--force-unsafe",
    },
    Fact {
        sentence: "The billing service token lives in BILLING_TOKEN_V2, the old variable is dead.",
        token: "BILLING_TOKEN_V2",
    },
    Fact {
        sentence: "We decided on zstd level 9 for the archives after comparing it with brotli.",
        token: "zstd level 9",
    },
    Fact {
        sentence: "Mira owns the payments module; ask her before touching src/payments/refund.rs.",
        token: "src/payments/refund.rs",
    },
    Fact {
        sentence: "The deploy script is scripts/ship-prod.sh and it needs the VPN up.",
        token: "ship-prod.sh",
    },
    Fact {
        sentence: "Our rate limit is 1,200 requests per minute per tenant, enforced in the gateway.",
        token: "1,200 requests",
    },
    Fact {
        sentence: "The feature flag for the new parser is PARSER_V3_ENABLED.",
        token: "PARSER_V3_ENABLED",
    },
    Fact {
        sentence: "Logs older than 45 days go to cold storage in bucket lore-archive-eu.",
        token: "lore-archive-eu",
    },
    Fact {
        sentence: "The CI image is ghcr.io/acme/builder:2026.11 and must stay on that tag.",
        token: "builder:2026.11",
    },
];

/// A tool output of about `chars` characters, different for each `n`.
pub fn tool_output(n: usize, chars: usize) -> String {
    let mut out = String::with_capacity(chars + 160);
    let mut line = 0usize;
    while out.len() < chars {
        let text = match (n + line) % 7 {
            0 => format!(
                "src/service_{n}/handler_{line}.rs:{}: pub async fn handle_{line}(ctx: &Context, req: Request) -> Result<Response> {{",
                12 + line
            ),
            1 => format!(
                "    let row = sqlx::query_as::<_, Row>(\"SELECT id, amount FROM ledger_{n} WHERE id = $1\").bind(req.id).fetch_one(&ctx.pool).await?;"
            ),
            2 => format!(
                "test service_{n}::tests::case_{line} ... ok ({} ms)",
                (line * 13 + n) % 97 + 1
            ),
            3 => format!(
                "    tracing::debug!(id = %row.id, amount = row.amount, \"loaded ledger row {line}\");"
            ),
            4 if n.is_multiple_of(5) && line % 9 == 4 => format!(
                "error[E0308]: mismatched types: expected `u64`, found `i64` --> src/service_{n}/model.rs:{}:17",
                40 + line
            ),
            4 => format!(
                "   Compiling service-{n}-part-{line} v0.{}.{} (/home/dev/acme/crates/service_{n})",
                line % 9,
                n % 7
            ),
            5 => format!(
                "drwxr-xr-x  2 dev dev 4096 Nov 30 12:{:02} src/service_{n}/module_{line}",
                line % 60
            ),
            _ => format!(
                "}} // handle_{line}: {} rows, {} bytes",
                line * 3 + n,
                line * 97 + n * 11
            ),
        };
        out.push_str(&text);
        out.push('\n');
        line += 1;
    }
    out
}

/// One user turn: its question and its tool outputs.
pub struct Turn {
    /// What the user writes.
    pub question: String,
    /// One output per tool exchange.
    pub outputs: Vec<String>,
}

/// `turns` turns: the first twelve each state a fact; outputs from 400 to 9,000 characters.
pub fn generate(turns: usize) -> Vec<Turn> {
    (0..turns)
        .map(|t| {
            let mut question = format!(
                "Step {t}: the handler in service {t} returns the wrong total; find out why and fix it, then rerun its tests."
            );
            if let Some(fact) = FACTS.get(t) {
                question = format!("{} {question}", fact.sentence);
            }
            let exchanges = 1 + (t * 7 + 3) % 3;
            let outputs = (0..exchanges)
                .map(|k| {
                    let size = 400 + ((t * 131 + k * 577) % 18) * 480;
                    tool_output(t * 3 + k, size)
                })
                .collect();
            Turn { question, outputs }
        })
        .collect()
}

/// The system prompt and tools of the benchmark's client (Claude-Code-like, with its own
/// breakpoint on the system prompt).
pub fn request_head(model: &str) -> Value {
    json!({
        "model": model,
        "max_tokens": 2048,
        "system": [
            {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
            {"type": "text", "text": format!("You are an interactive agent that helps users with software engineering tasks. {}", "Prefer small, reviewed changes; run the tests after every change; never commit secrets. ".repeat(40)), "cache_control": {"type": "ephemeral"}}
        ],
        "tools": [
            {"name": "Bash", "description": "Run a shell command in the project", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
            {"name": "Read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}},
            {"name": "Edit", "description": "Replace text in a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"}}}}
        ],
    })
}
