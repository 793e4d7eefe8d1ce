//! The 30 planted facts: each is stated exactly once in the session (by the user, by the
//! assistant, or inside a tool output), has a question that asks for it in other words, and an
//! answer key, a short string that appears verbatim in the one message that states the fact and
//! nowhere else.
//!
//! User and assistant facts are `{fNN}` placeholders in the task scripts ([`super::tasks`]);
//! tool facts are whole tool calls ([`fact_tool`]), four short outputs and six long ones
//! (over 4,000 characters, so the distiller sees them only through its annotation).

use serde_json::{Value, json};

use super::filler::{self, Lcg, TaskFiles};
use super::logs;

/// Who states a fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A user message.
    User,
    /// The assistant's text.
    Assistant,
    /// A tool output; `long` when over 4,000 characters.
    ToolOutput {
        /// Longer than the distiller's tool-output limit.
        long: bool,
    },
}

/// One planted fact.
#[derive(Debug, Clone, Copy)]
pub struct Fact {
    /// 1-based number (`{f07}` in the scripts).
    pub id: usize,
    /// Where it is stated.
    pub place: Place,
    /// The sentence (or output line) that states it.
    pub statement: &'static str,
    /// The question, worded differently.
    pub question: &'static str,
    /// The string that must appear in a text holding the fact.
    pub key: &'static str,
}

const fn fact(
    id: usize,
    place: Place,
    key: &'static str,
    statement: &'static str,
    question: &'static str,
) -> Fact {
    Fact {
        id,
        place,
        statement,
        question,
        key,
    }
}

const U: Place = Place::User;
const A: Place = Place::Assistant;
const SHORT: Place = Place::ToolOutput { long: false };
const LONG: Place = Place::ToolOutput { long: true };

/// The facts, in the order the session states them.
#[rustfmt::skip]
pub const FACTS: [Fact; 30] = [
    fact(1, U, "rust_decimal", "For the money type use the rust_decimal crate; plain f64 is out because the reconciliation report drifted by cents when we tried floats.", "Which library did we settle on for currency amounts in the port?"),
    fact(2, U, "PyO3", "We talked about calling the old code through PyO3 instead of porting it, but that is rejected: ops will not run a second runtime on the billing workers.", "Why didn't we simply call the legacy implementation from the new crate through bindings?"),
    fact(3, SHORT, "ROUND_HALF_EVEN", "ROUNDING = decimal.ROUND_HALF_EVEN  # banker's rounding, required by finance", "What rounding rule does the old Python ledger apply?"),
    fact(4, A, "posted_at", "One thing to watch: the legacy ledger writes posted_at as naive local time, so the port converts it to UTC when it reads old rows.", "Which timestamp field of the old ledger has no timezone?"),
    fact(5, LONG, "split_refund_across_periods", "thread 'split::tests::split_refund_across_periods' panicked at crates/ledger/src/split.rs:88:9:\nassertion failed: remaining.is_zero()", "Which unit test broke when a reimbursement straddles two billing months?"),
    fact(6, LONG, "ERR_LEASE_EXPIRED", "2026-11-03T09:14:07Z ERROR lease: renew failed holder=worker-3 code=ERR_LEASE_EXPIRED attempt=2", "What error code did the intermittent lock-extension test fail with?"),
    fact(7, A, "LEASE_TTL_SECS", "Root cause found: the test reads LEASE_TTL_SECS from the environment before the mock clock is installed, so the lease is created against the real clock and expires whenever the runner is slow.", "Why did the lock-extension test only fail now and then?"),
    fact(8, U, "--retries 3", "Do not paper over it with cargo nextest --retries 3; I reject retries for this test because they hide genuine races.", "Which quick workaround for the unreliable test did I turn down?"),
    fact(9, SHORT, "from_millis(750)", "crates/lease/src/renew.rs:42:pub const RENEW_MARGIN: Duration = Duration::from_millis(750);", "How long before expiry is a held lock extended?"),
    fact(10, U, "ci-runner-arm64-07", "It only reproduces on ci-runner-arm64-07, the slow ARM box, so test there once you have a theory.", "On which build machine does the intermittent failure show up?"),
    fact(11, U, "6543", "The service must reach Postgres through pgbouncer on port 6543, never directly on the database port.", "Which port do we use for the connection pooler in front of the database?"),
    fact(12, A, "currency_code", "I named the column currency_code, char(3) with a check against the ISO list, and left it nullable until the backfill is done.", "What is the new column on the bills table called, and what type does it have?"),
    fact(13, LONG, "55P03", "ERROR:  canceling statement due to lock timeout\nSQLSTATE: 55P03", "What SQL state code did the first run of the schema change abort with?"),
    fact(14, U, "BACKFILL_BATCH_SIZE=2500", "Backfill in small chunks: set BACKFILL_BATCH_SIZE=2500 and sleep between chunks so the replicas keep up.", "How many rows per chunk should the data fill-in job handle?"),
    fact(15, U, "pg_repack", "No pg_repack for the table rewrite: the DBA says it needs superuser, which we do not have on RDS.", "Which table-rewriting tool was ruled out, and for what reason?"),
    fact(16, U, "eu-west-3", "Production deploys go to eu-west-3 only; the other region is for staging.", "Which cloud region are production releases shipped to?"),
    fact(17, SHORT, "/internal/healthz/deep", "health_check_path = \"/internal/healthz/deep\"", "What endpoint does the load balancer probe to decide a new instance is ready?"),
    fact(18, A, "DEPLOY_ALLOW_DIRTY", "The script now refuses to deploy from a dirty git tree unless you export DEPLOY_ALLOW_DIRTY=1, and it prints the offending files.", "How can someone ship from a checkout with uncommitted changes?"),
    fact(19, LONG, "OOMKilled", "billing-api-7c9f4d-x2k8q   0/1     OOMKilled          3 (41s ago)   2m10s", "Why did the pods of the first rollout attempt keep restarting?"),
    fact(20, U, "rollback --to previous", "If a release goes bad, the way back is ./deploy.sh rollback --to previous, nothing manual.", "What is the command to revert to the prior release?"),
    fact(21, LONG, "rebuild_cache", "  38.21%  billing-api  billing-api          [.] ledger::index::rebuild_cache", "Which function consumed the most CPU in the profile of the slow endpoint?"),
    fact(22, A, "143 ms", "After the fix the p99 of GET /invoices is down from 870 ms to 143 ms on the staging load test, and CPU per request dropped by about two thirds.", "What tail latency did the invoice listing reach after the optimisation?"),
    fact(23, U, "20k entries", "Cap the in-process cache at 20k entries; memory on the API pods is tight.", "How large may the in-memory cache grow?"),
    fact(24, U, "Redis", "Don't move this cache to Redis: rejected, an extra network hop per lookup would eat the latency gain.", "Which external key-value store was proposed for caching and refused?"),
    fact(25, SHORT, "Seq Scan on invoice_lines", "  ->  Seq Scan on invoice_lines  (cost=0.00..48211.90 rows=1204711 width=64)", "What did the query plan show about how the line items table is read?"),
    fact(26, U, "1.93.1", "Keep the toolchain pinned at 1.93.1; 1.94 broke our proc macros in the api crate.", "Which compiler version is the repository locked to?"),
    fact(27, U, "just release-bundle", "Release artifacts are built with just release-bundle --locked, not with cargo directly.", "What command produces the shipped binaries?"),
    fact(28, A, "ci-cache-v4", "The CI cache key is now ci-cache-v4 plus the hashes of Cargo.lock and rust-toolchain.toml, so a toolchain bump invalidates it.", "What prefix do the pipeline's cached build directories use?"),
    fact(29, LONG, "pdf-render-sys", "error[licenses]: rejected license AGPL-3.0 of crate pdf-render-sys v0.4.1 (deny.toml: allow list)", "Which dependency did the licence policy block in the pipeline?"),
    fact(30, U, "squash-merge", "Always squash-merge into main, with the ticket id like BILL-1234 at the start of the title.", "How should pull requests land on the primary branch?"),
];

/// The fact numbered `id`.
pub fn by_id(id: usize) -> Option<&'static Fact> {
    FACTS.iter().find(|f| f.id == id)
}

/// A tool call that states a tool fact: `(name, input, output, is_error)`.
pub fn fact_tool(
    id: usize,
    task: &TaskFiles,
    rng: &mut Lcg,
) -> Option<(&'static str, Value, String, bool)> {
    let statement = by_id(id)?.statement.to_string();
    let bash = |cmd: &str| json!({"command": cmd});
    Some(match id {
        3 => {
            let body = filler::file_contents("legacy/billing/ledger.py", task, rng);
            let mut lines: Vec<String> = body.lines().map(str::to_string).collect();
            lines.insert(3.min(lines.len()), format!("   0  {statement}"));
            (
                "read_file",
                json!({"path": "legacy/billing/ledger.py"}),
                lines.join("\n"),
                false,
            )
        }
        5 => {
            let output = logs::test_log(
                task,
                rng,
                "split::tests::split_refund_across_periods",
                Some(&statement),
                &[],
            );
            ("bash", bash("cargo test -p ledger"), output, true)
        }
        6 => {
            let extra: Vec<String> = (0..12)
                .map(|i| {
                    if i == 7 {
                        statement.clone()
                    } else {
                        format!("2026-11-03T09:14:0{}Z DEBUG lease: tick holder=worker-{} remaining_ms={}", i % 8, i % 4, 900 - i * 40)
                    }
                })
                .collect();
            let output = logs::test_log(
                task,
                rng,
                "lease_renewal::renews_before_expiry",
                None,
                &extra,
            );
            (
                "bash",
                bash("cargo test --test lease_renewal -- --nocapture"),
                output,
                true,
            )
        }
        9 => {
            let mut hits = logs::grep_hits(task, "RENEW_MARGIN", rng);
            hits.push_str(&statement);
            ("bash", bash("rg -n RENEW_MARGIN crates/lease"), hits, false)
        }
        13 => {
            let mut output = String::new();
            for i in 0..70 {
                output.push_str(&format!(
                    "NOTICE:  relation \"invoice_audit_{i}\" already exists, skipping\n"
                ));
            }
            output.push_str("psql:migrations/pending.sql:12: ");
            output.push_str(&statement);
            output.push_str(
                "\nCONTEXT:  while locking relation \"invoices\"\nmigration failed, rolled back\n",
            );
            (
                "bash",
                bash("sqlx migrate run --database-url \"$STAGING_DATABASE_URL\""),
                output,
                true,
            )
        }
        17 => {
            let body = filler::file_contents("deploy/service.toml", task, rng);
            (
                "read_file",
                json!({"path": "deploy/service.toml"}),
                format!("{statement}\n{body}"),
                false,
            )
        }
        19 => {
            let mut output = String::from(
                "Waiting for deployment \"billing-api\" rollout to finish: 0 of 3 updated replicas are available...\n",
            );
            for i in 0..60 {
                output.push_str(&format!(
                    "{}s  Normal  {}  pod/billing-api-{}-{}  {}\n",
                    i * 2,
                    rng.pick(&["Scheduled", "Pulling", "Pulled", "Created", "Started"]),
                    rng.hex(6),
                    rng.hex(5),
                    rng.pick(&[
                        "Successfully assigned to node-2",
                        "Pulling image",
                        "Container created",
                        "Started container api"
                    ])
                ));
            }
            output.push_str(
                "NAME                        READY   STATUS             RESTARTS      AGE\n",
            );
            output.push_str(&statement);
            output.push_str("\nerror: deployment \"billing-api\" exceeded its progress deadline\n");
            (
                "bash",
                bash("./deploy/deploy.sh --env staging"),
                output,
                true,
            )
        }
        21 => {
            let output = logs::perf_report(rng, Some(&statement));
            (
                "bash",
                bash("perf report --stdio --no-children | head -120"),
                output,
                false,
            )
        }
        25 => {
            let output = format!(
                "                                   QUERY PLAN\n---------------------------------------------------------------------------\n Hash Join  (cost=120.55..61220.10 rows=30211 width=96)\n   Hash Cond: (invoice_lines.invoice_id = invoices.id)\n{statement}\n   ->  Hash  (cost=98.12..98.12 rows=1794 width=40)\n Planning Time: 0.412 ms\n Execution Time: 812.227 ms"
            );
            (
                "bash",
                bash("psql \"$STAGING_DATABASE_URL\" -c 'EXPLAIN ANALYZE SELECT …'"),
                output,
                false,
            )
        }
        29 => {
            let output = logs::ci_log(
                rng,
                &[
                    statement.clone(),
                    "error: 1 license check failed".to_string(),
                ],
            );
            (
                "bash",
                bash("cargo deny check licenses 2>&1 | tee deny.log"),
                output,
                true,
            )
        }
        _ => return None,
    })
}
