//! The six tasks of the synthetic session, step by step: what the user asks, which tools the
//! assistant runs (a plan in a tiny notation) and, where it matters, what it answers.
//!
//! Plan tokens, separated by spaces: `rN` read file N, `eN` edit file N, `gN` grep symbol N,
//! `b` short build, `B` long build log with a compile error, `W` long build log with warnings,
//! `t` short green test run, `T` long test run with a failure, `P` long profile, `G` long
//! failing CI log, `d` diff stat, `c` commit, a letter of [`super::filler::misc`] (`m k h y z L
//! q x v w p l`), or `fNN`, the tool call that states fact NN. `{fNN}` in a prompt or an answer
//! is replaced by the statement of fact NN. An empty answer gets a generic one.

use super::filler::TaskFiles;

/// One user request and what follows it.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// The user's message.
    pub prompt: &'static str,
    /// The tools the assistant runs, in order.
    pub plan: &'static str,
    /// The assistant's final text, or "" for a generic one.
    pub answer: &'static str,
}

/// One task: its files and its steps.
#[derive(Debug, Clone, Copy)]
pub struct Task {
    /// Short name, for the report.
    pub name: &'static str,
    /// Files, tests and symbols of the filler.
    pub files: TaskFiles,
    /// The steps, in order.
    pub steps: &'static [Step],
}

const fn s(prompt: &'static str, plan: &'static str, answer: &'static str) -> Step {
    Step {
        prompt,
        plan,
        answer,
    }
}

/// The session's tasks, in order.
#[rustfmt::skip]
pub const TASKS: [Task; 8] = [
    Task {
        name: "port the ledger module from Python to Rust",
        files: TaskFiles {
            krate: "ledger",
            files: &["legacy/billing/ledger.py", "crates/ledger/src/lib.rs", "crates/ledger/src/entry.rs", "crates/ledger/src/split.rs", "crates/ledger/src/account.rs", "crates/ledger/tests/parity.rs", "legacy/billing/accounts.py", "crates/ledger/Cargo.toml"],
            tests: &["entry::tests::posts_debit", "entry::tests::rejects_negative", "account::tests::opens_account", "lib::tests::balance_by_period", "split::tests::even_split", "parity::fixtures_match"],
            symbols: &["post_entry", "reverse_entry", "balance_of", "Amount"],
        },
        steps: &[
            s("We're porting the ledger module from legacy/billing/ledger.py into the crates/ledger crate this week. Read the Python side first and tell me what the public surface looks like.", "f03 r6 l", "The module exposes post_entry, reverse_entry, balance_of and a refund splitter, plus the Account and Entry classes; accounts.py only holds the account kinds. I suggest we port Entry and Account first, then posting, then the refund split."),
            s("Good plan, go ahead with the types. {f01} Create the Entry and Account types now.", "r4 e2 e4 e7 b", ""),
            s("Add posting: post_entry and reverse_entry with the same validation rules as the Python code.", "r0 g0 e1 e2 b t", ""),
            s("Before you go further, a note for whoever reads this later. {f02} Carry on with the balances.", "r0 e1 b t", ""),
            s("Port balance_of next, including the per-currency totals.", "g2 e1 e4 B e1 b t", ""),
            s("Now the refund split. Keep the Python behaviour exactly, even the odd cases.", "r0 e3 b f05", "One split test fails: the remainder of a refund that crosses a period boundary is dropped instead of carried into the second period."),
            s("Fix that failure, the remaining amount must land in the second period.", "r3 e3 t d", ""),
            s("Write a parity test that runs the same fixtures through both implementations.", "l r5 e5 t T e5 t", ""),
            s("What about timestamps? Check how the legacy code stores them.", "g1 r0 e2 t", "{f04} I added a conversion helper in crates/ledger/src/entry.rs and a test around the DST switch."),
            s("Run the whole ledger test suite and clippy.", "W T e2 t", ""),
            s("Clean up the public API: make the internals pub(crate) and document the rest.", "r1 e1 e2 e4 b", ""),
            s("Check the parity test against last month's production fixtures.", "l r5 t", ""),
            s("Show me the diff summary and write a short changelog entry.", "d r1 e1", ""),
            s("Good. Commit it on a branch called port-ledger and we'll review tomorrow.", "c p", ""),
        ],
    },
    Task {
        name: "fix a flaky integration test",
        files: TaskFiles {
            krate: "lease",
            files: &["tests/lease_renewal.rs", "crates/lease/src/renew.rs", "crates/lease/src/clock.rs", "crates/lease/src/lib.rs", ".github/workflows/ci.yml", "crates/lease/src/store.rs", "tests/support/mock_clock.rs", "crates/lease/Cargo.toml"],
            tests: &["renew::tests::renews_once", "clock::tests::mock_advances", "store::tests::claims_free_lease", "lib::tests::holder_changes", "store::tests::conflict_is_reported"],
            symbols: &["renew", "MockClock", "Lease::acquire", "holder"],
        },
        steps: &[
            s("tests/lease_renewal.rs fails every few CI runs and blocks merges. Reproduce it locally first.", "r0 t t f06", "It failed on the third run: the renewal came too late and the lease was gone. I haven't found why yet."),
            s("{f10} What does the renewal code look like?", "r1 r2 r3", ""),
            s("Look for where the renew margin is defined and how the TTL is configured.", "f09 g0 r3", ""),
            s("{f08} Find the actual cause.", "r0 r6 g1 r2", "I have a suspicion about the order in which the test sets things up; let me confirm it with tracing."),
            s("Add some tracing around the clock and run it in a loop until it fails.", "e2 e0 T r0", "{f07} The tracing shows the renewal arriving after expiry in every failing run."),
            s("Fix it properly: install the mock clock before anything reads the configuration.", "e0 e6 e3 b t", ""),
            s("Run the test 200 times in a loop to be sure.", "L t", ""),
            s("Also check the other tests that use the mock clock for the same ordering problem.", "g1 r5 e5 t", ""),
            s("Remove the tracing you added, keep only the debug log on renewal failure.", "e2 e0 b t d", ""),
            s("Update the CI workflow so the lease tests run single-threaded on ARM only.", "r4 e4 v d", ""),
            s("Run the full suite with the new ordering.", "B e3 b T e1 t", ""),
            s("Write a short note in the test explaining why the clock goes first.", "e0 t", ""),
            s("Show the final diff.", "d r0", ""),
            s("Push it as fix-lease-flake and open the PR.", "c p", ""),
        ],
    },
    Task {
        name: "a framework upgrade",
        files: TaskFiles {
            krate: "api",
            files: &["Cargo.toml", "crates/api/src/server.rs", "crates/api/src/routes/mod.rs", "crates/api/src/middleware.rs", "crates/api/src/error.rs", "crates/api/src/extract.rs", "crates/api/tests/routes.rs", "crates/api/Cargo.toml"],
            tests: &["routes::tests::health_ok", "middleware::tests::adds_request_id", "error::tests::maps_not_found", "extract::tests::rejects_bad_json"],
            symbols: &["Router::new", "from_fn", "IntoResponse", "State("],
        },
        steps: &[
            s("Quick detour before the migration: bump axum and hyper to the current major versions in the api crate.", "r0 r7 e7 B", ""),
            s("Fix the compile errors one module at a time, starting with the router.", "r2 e2 B e2 b", ""),
            s("Now the middleware; the request id layer used the old service trait.", "r3 e3 e3 b t", ""),
            s("The error type needs to implement the new response trait.", "r4 e4 b T e4 t", ""),
            s("Check the extractors, the JSON rejection type changed.", "r5 g2 e5 b", ""),
            s("Run the route tests.", "T e6 t", ""),
            s("Look for any remaining uses of the old body type.", "g0 g3 e1 b", ""),
            s("Update the server start-up to the new serve function.", "r1 e1 b t", ""),
            s("Check the binary still starts and answers the health route.", "b z", ""),
            s("Run clippy on the crate.", "W e3 b", ""),
            s("Any deprecation warnings left?", "g1 e2 b", ""),
            s("Diff summary, please.", "d", ""),
            s("Commit it as a single upgrade commit.", "c", ""),
        ],
    },
    Task {
        name: "database migration with a backfill",
        files: TaskFiles {
            krate: "api",
            files: &["migrations/20261020_create_invoices.sql", "crates/api/src/db.rs", "crates/api/src/invoice.rs", "config/database.toml", "crates/api/src/bin/backfill.rs", "crates/api/tests/invoice_currency.rs", "crates/api/src/lib.rs", "crates/api/Cargo.toml"],
            tests: &["invoice::tests::creates_invoice", "invoice::tests::lists_by_customer", "db::tests::pool_connects", "invoice::tests::totals_match", "backfill::tests::resumes"],
            symbols: &["PgPoolOptions", "Invoice", "query_as", "currency"],
        },
        steps: &[
            s("Next: invoices need a currency column. {f11} Check the database config first.", "r3 r1 g0", ""),
            s("Write the migration: add the column nullable first, we backfill and then set NOT NULL.", "l r0 e0", "{f12}"),
            s("Apply it to the staging database.", "f13 r0", "The migration hit a lock timeout: a long report query held the invoices table. I suggest retrying outside the report window with a short lock_timeout."),
            s("Retry it with lock_timeout set to 5s in the migration.", "e0 m", ""),
            s("Now the backfill, as a small binary. {f14}", "l e4 b r4 e4 b", ""),
            s("Run the backfill against staging and watch replica lag.", "k k", ""),
            s("{f15} How do we set NOT NULL without a long lock?", "r0 g3", "Add a CHECK constraint NOT VALID, validate it separately, then SET NOT NULL; Postgres accepts that without a full scan once a validated check exists."),
            s("Do that in a second migration.", "e0 m t", ""),
            s("Update the Invoice struct and the queries in crates/api/src/invoice.rs.", "r2 e2 e1 B e2 b", ""),
            s("Add tests for invoices in two currencies.", "e5 T e2 t", ""),
            s("Check the connection settings in db.rs still match the pooler.", "r1 g0 e1 b", ""),
            s("Run the full api test suite.", "t T e5 t", ""),
            s("Diff and summary please.", "d", ""),
            s("Commit as two commits: migrations first, then code.", "c c", ""),
        ],
    },
    Task {
        name: "a deploy script",
        files: TaskFiles {
            krate: "deploy",
            files: &["deploy/deploy.sh", "deploy/service.toml", "deploy/k8s/api.yaml", "Dockerfile", "docs/deploy.md", "deploy/lib/common.sh", "deploy/k8s/ingress.yaml", "Makefile"],
            tests: &["smoke::health", "smoke::list_invoices", "smoke::metrics"],
            symbols: &["kubectl", "docker push", "rollout", "REGION"],
        },
        steps: &[
            s("Let's replace the manual release checklist with a script, deploy/deploy.sh. {f16} Look at what we have.", "l r3 r2", ""),
            s("Read the service config too.", "f17 r6", ""),
            s("Write the first version: build the image, push it, apply the manifest, wait for the rollout.", "e0 h e5 e0 h", ""),
            s("Try it against staging.", "f19 r2", "The pods were killed for memory during start-up: the limit in deploy/k8s/api.yaml is 256Mi and the cache warm-up needs more. I propose 512Mi."),
            s("Raise the limit to 512Mi and retry.", "e2 y", ""),
            s("Make the script safe: it must refuse to run from a dirty tree.", "e0 h e5 h", "{f18}"),
            s("{f20} Implement that.", "r0 e0 h y", ""),
            s("Add a smoke test after the rollout that calls the health endpoint.", "e0 e5 h y", ""),
            s("Build the Docker image locally to check the multi-stage build still works.", "B e3 W", ""),
            s("Document the script in docs/deploy.md.", "r4 e4", ""),
            s("Run shellcheck on everything under deploy/.", "h e0 h e5 h", ""),
            s("Dry-run a production deploy with --dry-run.", "y r2", ""),
            s("Show the diff.", "d", ""),
            s("Commit and tag the script as deploy-v1.", "c", ""),
        ],
    },
    Task {
        name: "review comments on the ledger port",
        files: TaskFiles {
            krate: "ledger",
            files: &["crates/ledger/src/lib.rs", "crates/ledger/src/entry.rs", "crates/ledger/src/split.rs", "crates/ledger/src/account.rs", "crates/ledger/src/error.rs", "crates/ledger/tests/parity.rs", "crates/ledger/README.md", "crates/ledger/benches/post.rs"],
            tests: &["entry::tests::posts_debit", "split::tests::even_split", "account::tests::closes_account", "error::tests::display_is_stable"],
            symbols: &["LedgerError", "Entry::new", "impl Display", "#[must_use]"],
        },
        steps: &[
            s("The review on the ledger port came back. First comment: the error type should be an enum with one variant per failure.", "r4 g0 e4 e1 B e1 b", ""),
            s("Second: Entry::new should validate instead of the callers.", "r1 g1 e1 e3 b t", ""),
            s("Third: add #[must_use] to the functions that return a new balance.", "g3 e0 e2 b", ""),
            s("They also want doc examples on the public functions.", "r0 e0 e1 t", ""),
            s("Run the doc tests.", "T e0 t", ""),
            s("A benchmark for posting, please, so we can compare with the Python numbers.", "l e7 b z", ""),
            s("Rename the account kinds to match the finance glossary.", "r3 g2 e3 e5 b t", ""),
            s("Write the README for the crate.", "r6 e6", ""),
            s("Run the whole suite again.", "W t", ""),
            s("Reply to the review with what changed.", "d", ""),
            s("Push the fixes to the same branch.", "c p", ""),
        ],
    },
    Task {
        name: "a performance investigation",
        files: TaskFiles {
            krate: "api",
            files: &["crates/api/src/routes/invoices.rs", "crates/ledger/src/index.rs", "crates/api/src/cache.rs", "bench/invoices.js", "crates/api/src/db.rs", "crates/api/src/metrics.rs", "crates/api/src/serialize.rs", "crates/api/Cargo.toml"],
            tests: &["routes::invoices::tests::paginates", "cache::tests::evicts_oldest", "cache::tests::invalidates_on_write", "serialize::tests::stable_order"],
            symbols: &["list_invoices", "AccountIndex", "Cache::get", "to_writer"],
        },
        steps: &[
            s("GET /invoices is slow in production, p99 is around 870 ms. Profile it under the staging load test.", "r3 z f21", "Most of the CPU goes into rebuilding the per-account index on every request; database time is small in comparison."),
            s("Look at the query side too, run EXPLAIN on the listing query.", "f25 r4", "The plan reads every line item of every invoice to join them; there is no index on the foreign key."),
            s("Add the missing index on the invoice id of the line items in a migration.", "l m z", ""),
            s("Now cache the index instead of rebuilding it. {f23}", "r1 e2 e0 b", ""),
            s("{f24} Keep it in process and invalidate on writes.", "r2 e2 e1 b t", ""),
            s("Run the load test again.", "z r3", "{f22}"),
            s("Make sure invalidation is right: write a test that updates an invoice and reads it back.", "e2 T e2 t", ""),
            s("Profile once more to see what's left.", "P r0", ""),
            s("Reduce allocations in the serializer of the listing route.", "r6 e6 e0 b z", ""),
            s("Add metrics for cache hits and misses.", "e5 e2 b t", ""),
            s("Check memory on the pods under load.", "q z q", ""),
            s("Run clippy and the full suite.", "W t", ""),
            s("Diff please.", "d", ""),
            s("Commit with the load test numbers in the message.", "c", ""),
        ],
    },
    Task {
        name: "the CI pipeline",
        files: TaskFiles {
            krate: "ci",
            files: &[".github/workflows/ci.yml", "justfile", "deny.toml", "Cargo.toml", "crates/api/Cargo.toml", "CONTRIBUTING.md", ".github/workflows/release.yml", ".github/pull_request_template.md"],
            tests: &["lint", "test", "release"],
            symbols: &["actions/cache", "runs-on", "cargo deny", "needs:"],
        },
        steps: &[
            s("Last task this week: the CI pipeline. {f26} Check the workflow and the justfile.", "r0 r1 r6", ""),
            s("{f27} Make the release job use that.", "r6 e6 v", ""),
            s("Speed up the pipeline with a proper cache.", "r0 g0 e0 v", "{f28}"),
            s("Add cargo deny to the pipeline and run it locally first.", "e0 r2 f29", "cargo deny rejects one transitive dependency for its licence; it comes in through the PDF export feature of the api crate."),
            s("Put the PDF export behind a feature flag that is off by default, so the default build passes the licence check.", "r4 e4 e3 W x", ""),
            s("{f30} Add a PR title check for that.", "e0 r7 e7 v", ""),
            s("Split the workflow into lint, test and release jobs.", "e0 e0 v", ""),
            s("Run the pipeline on a branch and show me the result.", "G e0 w", ""),
            s("Add a job that runs the lease tests on the ARM runner.", "e0 v w", ""),
            s("Cache the cargo registry separately from target.", "e0 v", ""),
            s("Check the pipeline time before and after.", "w w", ""),
            s("Update the contributing guide with the new checks.", "r5 e5", ""),
            s("Diff.", "d", ""),
            s("Commit and open the PR.", "c p", ""),
        ],
    },
];
