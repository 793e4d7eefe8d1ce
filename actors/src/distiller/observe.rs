//! Generation 0: undistilled messages become observation logs, segment by segment.

use lore_storage::memory::{Distillation, WorkerBucket};
use lore_storage::now_ms;

use super::input::{
    RenderedMessage, estimate_tokens, pinned_assertions, render_messages, session_date,
    tool_failures,
};
use super::job::{Job, Stop};
use super::prompts::{
    OBSERVER_SYSTEM, expands, extract_observations, observer_max_tokens, observer_user,
};
use crate::ActorError;
use crate::documents::distillation_doc;

/// What one pass wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ObserveReport {
    /// Observation logs written.
    pub written: u64,
    /// Segments whose output expanded instead of compressing (dropped; sources marked read).
    pub rejected: u64,
}

/// Undistilled tokens of a session (for the segment-cap trigger).
pub fn pending_tokens(
    store: &lore_storage::Store,
    session_id: &str,
    tool_output_max_chars: usize,
) -> Result<u64, Stop> {
    let state = store.distill_state(session_id)?;
    let messages = store.session_log_from(session_id, state.next_seq)?;
    Ok(render_messages(&messages, tool_output_max_chars)
        .iter()
        .map(|m| m.tokens)
        .sum())
}

/// Most segments one session may have waiting; older messages are left undistilled.
const BACKLOG_SEGMENTS: u64 = 4;

/// How many of the oldest messages to leave out so that the rest holds at most `cap` tokens.
pub fn backlog_skip(rendered: &[RenderedMessage], cap: u64) -> usize {
    let mut kept = 0;
    for (i, message) in rendered.iter().enumerate().rev() {
        kept += message.tokens;
        if kept > cap {
            return i + 1;
        }
    }
    0
}

/// Splits rendered messages into runs of at most `cap` tokens (a single larger message is a
/// run of its own).
pub fn segments(rendered: &[RenderedMessage], cap: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut tokens = 0;
    for (i, message) in rendered.iter().enumerate() {
        if i > start && tokens + message.tokens > cap {
            out.push(start..i);
            start = i;
            tokens = 0;
        }
        tokens += message.tokens;
    }
    if start < rendered.len() {
        out.push(start..rendered.len());
    }
    out
}

/// Distils what is pending when it meets the thresholds (at least `min_messages` messages with
/// something to say and `min_tokens` tokens); each segment is stored with the cursor in one
/// transaction, so a failure keeps everything written before it and nothing of itself.
pub async fn distill_pending(job: &Job) -> Result<ObserveReport, Stop> {
    let mut report = ObserveReport::default();
    let settings = &job.settings;
    let mut state = job.store.distill_state(&job.session_id)?;
    let messages = job
        .store
        .session_log_from(&job.session_id, state.next_seq)?;
    let mut rendered = render_messages(&messages, settings.tool_output_max_chars);
    let speaking = rendered.iter().filter(|m| !m.line.is_empty()).count();
    let tokens: u64 = rendered.iter().map(|m| m.tokens).sum();
    if speaking < settings.min_messages || tokens < settings.min_tokens {
        return Ok(report);
    }
    // A history captured before distillation existed (or while it was off) is not distilled
    // all at once: only its newest part; the rest stays searchable as raw messages.
    let skip = backlog_skip(&rendered, settings.max_segment_tokens * BACKLOG_SEGMENTS);
    let mut messages = messages;
    if skip > 0 {
        state.next_seq = rendered[skip - 1].seq + 1;
        state.rejected += skip as u64;
        job.store
            .commit_distillations(&job.session_id, &state, &[])?;
        tracing::info!(session = %job.session_id, skipped = skip, "old undistilled messages left raw");
        rendered.drain(..skip);
        messages.drain(..skip);
    }
    let project = job
        .store
        .load_session(&job.session_id)?
        .and_then(|record| record.project);
    let mut previous = job
        .store
        .session_distillations(&job.session_id)?
        .into_iter()
        .rev()
        .find(|d| d.generation == 0)
        .map(|d| d.observations);
    for range in segments(&rendered, settings.max_segment_tokens) {
        let window = &messages[range.clone()];
        let lines: Vec<&str> = rendered[range.clone()]
            .iter()
            .filter(|m| !m.line.is_empty())
            .map(|m| m.line.as_str())
            .collect();
        let source_tokens: u64 = rendered[range.clone()].iter().map(|m| m.tokens).sum();
        let last_seq = rendered[range.end - 1].seq;
        if lines.is_empty() {
            state.next_seq = last_seq + 1;
            job.store
                .commit_distillations(&job.session_id, &state, &[])?;
            continue;
        }
        let user = observer_user(
            previous.as_deref(),
            &session_date(window),
            &pinned_assertions(window),
            &tool_failures(window),
            &lines,
        );
        let reply = job
            .ask(
                WorkerBucket::Distillation,
                OBSERVER_SYSTEM,
                user,
                observer_max_tokens(source_tokens),
            )
            .await?;
        let observations = extract_observations(&reply.text);
        if observations.is_empty() && !job.give_up {
            return Err(Stop::Failed(ActorError::WorkerReplyRejected(
                "the observer answered with no observations; the messages stay undistilled and are tried again later".into(),
            )));
        }
        let output_tokens = estimate_tokens(&observations);
        state.next_seq = last_seq + 1;
        // An empty answer after repeated failures is given up like an expanding one: the
        // messages stay searchable as they are.
        if observations.is_empty() || expands(source_tokens, output_tokens) {
            state.rejected += window.len() as u64;
            job.store
                .commit_distillations(&job.session_id, &state, &[])?;
            report.rejected += 1;
            tracing::info!(
                session = %job.session_id,
                source_tokens,
                output_tokens,
                "observer output expanded its source; dropped"
            );
            continue;
        }
        let row = Distillation {
            session_id: job.session_id.clone(),
            n: state.next_n,
            project: project.clone(),
            observations: observations.clone(),
            generation: 0,
            source_seqs: window.iter().map(|m| m.seq).collect(),
            consumed: Vec::new(),
            source_tokens,
            tokens: output_tokens,
            archived: false,
            model: Some(reply.model.clone()),
            created_at_ms: now_ms(),
        };
        state.next_n += 1;
        job.store
            .commit_distillations(&job.session_id, &state, std::slice::from_ref(&row))?;
        job.index(vec![distillation_doc(&row)]);
        report.written += 1;
        previous = Some(observations);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(tokens: &[u64]) -> Vec<RenderedMessage> {
        tokens
            .iter()
            .enumerate()
            .map(|(i, &tokens)| RenderedMessage {
                seq: i as u64,
                line: "x".into(),
                tokens,
            })
            .collect()
    }

    #[test]
    fn a_long_backlog_keeps_only_its_newest_part() {
        assert_eq!(backlog_skip(&rendered(&[10, 10, 10]), 100), 0);
        assert_eq!(backlog_skip(&rendered(&[50, 50, 30, 30]), 100), 2);
        assert_eq!(backlog_skip(&rendered(&[500]), 100), 1);
    }

    #[test]
    fn segments_respect_the_cap_and_keep_large_messages_whole() {
        assert_eq!(segments(&rendered(&[10, 10, 10]), 100), vec![0..3]);
        assert_eq!(
            segments(&rendered(&[60, 60, 60]), 100),
            vec![0..1, 1..2, 2..3]
        );
        assert_eq!(segments(&rendered(&[500, 10, 10]), 100), vec![0..1, 1..3]);
        assert!(segments(&rendered(&[]), 100).is_empty());
    }
}
