//! The seeded cost ledger: each session's conversation turns priced at claude-sonnet-4-5's list
//! prices (written here, not taken from the catalogue: this crate depends on `proto` and
//! `storage` only), the memory workers' calls per day, and two throttled requests today. Days
//! count back from the day of seeding: session `s` spent on day `today − s % 5`, and the workers
//! on each of the five days.

use lore_proto::Usage;
use lore_storage::costs::{CONVERSATION, CostEntry, CostTotals};
use lore_storage::memory::{UsageTotals, WorkerBucket, day_of};
use lore_storage::{MessageSource, SessionRecord, Store, StoredMessage, now_ms};

const MS_PER_DAY: u64 = 86_400_000;
/// claude-sonnet-4-5, US dollars per million tokens: input, output, cache read, 5-minute write.
const PRICE: [f64; 4] = [3.0, 15.0, 0.3, 3.75];
/// Prompt tokens a passthrough proxy would have sent on top, per turn at a layer above 0.
const UNSENT_PER_LAYER: u64 = 1_500;

fn err(e: lore_storage::StorageError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// One reply's totals at [`PRICE`].
fn priced(usage: &Usage, layer: Option<u8>) -> CostTotals {
    let [input, output, read, write] = PRICE;
    let per_m = |tokens: u64, price: f64| tokens as f64 * price / 1e6;
    let read_usd = per_m(usage.cache_read_input_tokens, read);
    let write_usd = per_m(usage.cache_creation_input_tokens, write);
    let prompt_usd = per_m(usage.input_tokens, input) + read_usd + write_usd;
    let sent =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let unsent = u64::from(layer.unwrap_or(0)) * UNSENT_PER_LAYER;
    CostTotals {
        calls: 1,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_input_tokens,
        cache_write_tokens: usage.cache_creation_input_tokens,
        cost_usd: prompt_usd + per_m(usage.output_tokens, output),
        cache_read_usd: read_usd,
        cache_write_usd: write_usd,
        cache_savings_usd: per_m(usage.cache_read_input_tokens, input) - read_usd,
        passthrough_tokens: sent + unsent,
        sent_tokens: sent,
        gradient_savings_usd: unsent as f64 * prompt_usd / sent.max(1) as f64,
        ..Default::default()
    }
}

/// Session `index`'s conversation cost, as one ledger entry (its turns summed).
pub fn seed_session(
    store: &Store,
    record: &SessionRecord,
    messages: &[StoredMessage],
    index: usize,
) -> anyhow::Result<()> {
    let mut totals = CostTotals::default();
    let mut previous_layer = None;
    for message in messages
        .iter()
        .filter(|m| m.source == MessageSource::Response)
    {
        let Some(usage) = &message.usage else {
            continue;
        };
        let mut turn = priced(usage, message.context_layer);
        if previous_layer.is_some() && message.context_layer != previous_layer {
            turn.layer_changes = 1;
            turn.layer_change_write_usd = turn.cache_write_usd;
        }
        previous_layer = message.context_layer;
        totals.add(&turn);
    }
    if totals.calls == 0 {
        return Ok(());
    }
    let at_ms = now_ms().saturating_sub((index % 5) as u64 * MS_PER_DAY);
    let day = day_of(at_ms);
    let entry = CostEntry {
        day: &day,
        bucket: CONVERSATION,
        session_id: Some(&record.id),
        project: record.project.as_deref(),
        model: record.model.as_deref(),
        at_ms,
        totals: &totals,
    };
    store.add_cost(&entry, None).map_err(err)
}

/// The workers' calls on each of the five days, and today's throttle counters.
pub fn seed_ledger(store: &Store) -> anyhow::Result<()> {
    let now = now_ms();
    for back in 0..5u64 {
        let date = day_of(now.saturating_sub((4 - back) * MS_PER_DAY));
        for (bucket, cost) in [
            (WorkerBucket::Distillation, 0.012),
            (WorkerBucket::Curation, 0.004),
        ] {
            let usage = UsageTotals {
                calls: 3 + back,
                failures: 0,
                input_tokens: 12_000,
                output_tokens: 900,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
                cost_usd: cost * (back + 1) as f64,
            };
            store
                .record_worker_usage(&date, bucket, &usage)
                .map_err(err)?;
        }
    }
    let today = day_of(now);
    for delay_ms in [1_200, 2_300] {
        store.add_throttle(&today, delay_ms).map_err(err)?;
    }
    Ok(())
}
