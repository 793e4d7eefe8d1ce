//! Meta-distillation: past the threshold, the older generation-0 logs are folded into one
//! consolidated context (anchored on the previous one) and archived: out of the context
//! prefix, still searchable.

use lore_storage::memory::{Distillation, WorkerBucket};
use lore_storage::now_ms;

use super::input::estimate_tokens;
use super::job::{Job, Stop};
use super::prompts::{REFLECTOR_SYSTEM, reflector_max_tokens, reflector_user};
use crate::ActorError;
use crate::documents::distillation_doc;

/// New logs to wait for after a consolidation was given up.
const RETRY_AFTER_LOGS: u64 = 5;

/// Consolidates when the live generation-0 logs reach the threshold, keeping the newest
/// `keep_recent`; returns the new consolidation, if one was written.
/// True when the session has enough live generation-0 logs for a consolidation.
pub fn due(
    store: &lore_storage::Store,
    session_id: &str,
    settings: &super::MemorySettings,
) -> bool {
    let Ok(state) = store.distill_state(session_id) else {
        return false;
    };
    if state.consolidate_after_n > state.next_n {
        return false;
    }
    store.session_distillations(session_id).is_ok_and(|rows| {
        let live = rows
            .iter()
            .filter(|d| d.generation == 0 && !d.archived)
            .count();
        live >= settings.meta_threshold && live > settings.keep_recent
    })
}

pub async fn consolidate(job: &Job) -> Result<Option<Distillation>, Stop> {
    let settings = &job.settings;
    let state = job.store.distill_state(&job.session_id)?;
    if state.consolidate_after_n > state.next_n {
        return Ok(None);
    }
    let rows = job.store.session_distillations(&job.session_id)?;
    let live: Vec<&Distillation> = rows
        .iter()
        .filter(|d| d.generation == 0 && !d.archived)
        .collect();
    if live.len() < settings.meta_threshold || live.len() <= settings.keep_recent {
        return Ok(None);
    }
    let consumed = &live[..live.len() - settings.keep_recent];
    let previous = rows.iter().rev().find(|d| d.generation > 0 && !d.archived);
    let logs: Vec<(u64, &str)> = consumed
        .iter()
        .map(|d| (d.n, d.observations.as_str()))
        .collect();
    let user = reflector_user(previous.map(|p| p.observations.as_str()), &logs);
    let input_tokens = estimate_tokens(&user);
    let reply = job
        .ask(
            WorkerBucket::Distillation,
            REFLECTOR_SYSTEM,
            user,
            reflector_max_tokens(input_tokens),
        )
        .await?;
    let text = reply.text.trim().to_string();
    let tokens = estimate_tokens(&text);
    let unusable = if text.is_empty() {
        Some("the reflector answered with nothing".to_string())
    } else if tokens > input_tokens {
        Some(format!(
            "the consolidation ({tokens} tokens) was longer than its input ({input_tokens})"
        ))
    } else {
        None
    };
    let mut state = job.store.distill_state(&job.session_id)?;
    if let Some(why) = unusable {
        if job.give_up {
            // Tried enough: wait for more logs before consolidating again.
            state.consolidate_after_n = state.next_n + RETRY_AFTER_LOGS;
            job.store
                .commit_distillations(&job.session_id, &state, &[])?;
            return Ok(None);
        }
        return Err(Stop::Failed(ActorError::WorkerReplyRejected(format!(
            "{why}; it was dropped and the logs stay as they are"
        ))));
    }
    let mut folded: Vec<u64> = consumed.iter().map(|d| d.n).collect();
    let mut source_tokens: u64 = consumed.iter().map(|d| d.tokens).sum();
    if let Some(previous) = previous {
        folded.push(previous.n);
        source_tokens += previous.tokens;
    }
    let row = Distillation {
        session_id: job.session_id.clone(),
        n: state.next_n,
        project: consumed.last().and_then(|d| d.project.clone()),
        observations: text,
        generation: previous.map_or(0, |p| p.generation) + 1,
        source_seqs: Vec::new(),
        consumed: folded,
        source_tokens,
        tokens,
        archived: false,
        model: Some(reply.model.clone()),
        created_at_ms: now_ms(),
    };
    state.next_n += 1;
    let mut written = vec![row.clone()];
    for d in consumed.iter().copied().chain(previous) {
        let mut archived = d.clone();
        archived.archived = true;
        written.push(archived);
    }
    job.store
        .commit_distillations(&job.session_id, &state, &written)?;
    job.index(vec![distillation_doc(&row)]);
    Ok(Some(row))
}
