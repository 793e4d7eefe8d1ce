//! A session's long-term knowledge in its prompt: system[1] computed on its first turn and kept,
//! system[2] pinned once the knowledge search has answered (from the second turn, or the first
//! when the session arrives large), and the knowledge deltas: an entry that changed or became
//! relevant waits for the next turn boundary at the tail and joins the session's one ledger of
//! insertions (with the card blocks, [`crate::ledger`]), which shows it there in a fixed-notice
//! pair and replays it at the same place on every later turn (moved to the raw window's start
//! when the gradient drops its message, re-anchored when the client rewrote it). After every
//! reply the actor asks the search again if any knowledge was written meanwhile.

use actix::prelude::*;
use lore_proto::CanonicalRequest;
use lore_proto::inject::is_user_text;
use lore_storage::memory::KnowledgeEntry;
use lore_storage::{Insertion, InsertionKind};
use tracing::{info, warn};

use super::SessionActor;
use crate::ltm::render::{delta, knowledge_block, stable};
use crate::ltm::select::{baseline, changes, pin, recent_matches};
use crate::ltm::{budget, key, key_id};
use crate::turn::Knowledge;

fn is_delta(insertion: &Insertion) -> bool {
    insertion.kind == InsertionKind::Delta
}

/// Deltas kept before they are folded into one.
const MAX_DELTAS: usize = 8;
/// Messages that make a first turn large enough to pin system[2] at once.
const LARGE_COLD_START: usize = 20;
/// Characters of recent conversation the knowledge search reads.
const SEARCH_CONTEXT_CHARS: usize = 2_000;
/// Entries the search returns.
const SEARCH_LIMIT: usize = 30;
/// What preferences may take of system[1], as a share of the LTM budget (reference 0.02 of
/// the usable window, against 0.05 for the whole budget).
const PREFERENCE_SHARE: f64 = 0.4;

/// The knowledge search's answer for a session.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Candidates {
    /// The knowledge epoch the search started at.
    pub epoch: u64,
    /// Entry ids with their relevance, best first.
    pub found: Vec<(String, f32)>,
}

impl SessionActor {
    /// The project whose knowledge the session sees (none while it is unattributed).
    fn knowledge_project(&self) -> Option<String> {
        self.record
            .project
            .clone()
            .filter(|_| !self.record.project_provisional)
    }

    fn knowledge(&self) -> Vec<KnowledgeEntry> {
        match self.store.all_knowledge() {
            Ok(entries) => entries,
            Err(err) => {
                warn!(session = %self.record.id, error = %err, "knowledge unreadable; the prompt goes without it");
                Vec::new()
            }
        }
    }

    /// This turn's knowledge for the prompt; updates the session's record.
    pub(super) fn knowledge_for_turn(
        &mut self,
        request: &CanonicalRequest,
        identities: &[[u8; 16]],
        usable: u64,
    ) -> Knowledge {
        if !self.services.ltm || request.previous_response_id.is_some() {
            return Knowledge::default();
        }
        let project = self.knowledge_project();
        self.record.ltm.turns += 1;
        let ltm_budget = budget(usable);
        let mut entries: Option<Vec<KnowledgeEntry>> = None;
        if self.record.ltm.stable.is_none() {
            let all = entries.get_or_insert_with(|| self.knowledge());
            let entities = self.store.all_entities().unwrap_or_default();
            let base = baseline(all, &entities, project.as_deref());
            let text = stable(
                &base.preferences,
                &base.entities,
                &base.catalogue,
                (ltm_budget as f64 * PREFERENCE_SHARE) as u64,
            );
            self.record
                .ltm
                .keys
                .extend(base.preferences.iter().map(|e| key(e)));
            self.record.ltm.stable = Some(text.unwrap_or_default());
        }
        let large = request.messages.len() >= LARGE_COLD_START;
        if self.services.ltm_each_turn {
            return self.knowledge_each_turn(project.as_deref(), ltm_budget, large);
        }
        if self.record.ltm.pinned.is_none()
            && (self.record.ltm.turns >= 2 || large)
            && let Some(found) = self.candidates.take()
        {
            let all = entries.get_or_insert_with(|| self.knowledge());
            let sticky: Vec<String> = self
                .record
                .ltm
                .keys
                .iter()
                .map(|k| key_id(k).to_string())
                .collect();
            let chosen = pin(all, &found, project.as_deref(), ltm_budget, &sticky);
            if chosen.is_empty() {
                self.record.ltm.pinned = Some(String::new());
            } else {
                self.record.ltm.keys.extend(chosen.iter().map(|e| key(e)));
                self.record.ltm.pinned = Some(knowledge_block(&chosen));
                info!(session = %self.record.id, entries = chosen.len(), "long-term knowledge pinned into the prompt");
            }
        }
        // A pending change is shown at a turn boundary at the tail, never between a tool call
        // and its result.
        let boundary = request.messages.last().is_some_and(is_user_text);
        if boundary && !self.record.ltm.pending.is_empty() && self.record.ltm.pinned.is_some() {
            let all = entries.get_or_insert_with(|| self.knowledge());
            let pending = std::mem::take(&mut self.record.ltm.pending);
            let shown: Vec<&KnowledgeEntry> = pending
                .iter()
                .filter_map(|k| all.iter().find(|e| e.id == key_id(k)))
                .collect();
            if !shown.is_empty() {
                let position = request.messages.len() - 1;
                let anchor = identities.get(position).copied().unwrap_or([0; 16]);
                self.record.ltm.keys.extend(shown.iter().map(|e| key(e)));
                self.record.ledger.push(Insertion {
                    kind: InsertionKind::Delta,
                    position: u32::try_from(position).unwrap_or(u32::MAX),
                    anchor,
                    text: delta(&shown),
                    keys: shown.iter().map(|e| key(e)).collect(),
                    created_at_ms: lore_storage::now_ms(),
                });
                info!(session = %self.record.id, entries = shown.len(), "knowledge delta added near the tail");
                let count = self.record.ledger.iter().filter(|i| is_delta(i)).count();
                if count > MAX_DELTAS {
                    self.fold_deltas(all, position, anchor);
                }
            }
        }
        // The deltas are the ledger's: placed with the cards once the plan has chosen the array.
        Knowledge {
            stable: self.record.ltm.stable.clone().filter(|t| !t.is_empty()),
            pinned: self.record.ltm.pinned.clone().filter(|t| !t.is_empty()),
            deltas: Vec::new(),
        }
    }

    /// `LORE_LTM=each-turn`: system[2] is whatever the latest search found, rendered again on
    /// every turn, and nothing goes into deltas (the baseline the pin is measured against).
    fn knowledge_each_turn(
        &mut self,
        project: Option<&str>,
        ltm_budget: u64,
        large: bool,
    ) -> Knowledge {
        if (self.record.ltm.turns >= 2 || large)
            && let Some(found) = self.candidates.take()
        {
            let all = self.knowledge();
            let chosen = pin(&all, &found, project, ltm_budget, &[]);
            self.record.ltm.pinned = Some(knowledge_block(&chosen));
        }
        Knowledge {
            stable: self.record.ltm.stable.clone().filter(|t| !t.is_empty()),
            pinned: self.record.ltm.pinned.clone().filter(|t| !t.is_empty()),
            deltas: Vec::new(),
        }
    }

    /// Folds every delta of the ledger into one at the newest place (past [`MAX_DELTAS`]); the
    /// cards stay as they are.
    fn fold_deltas(&mut self, all: &[KnowledgeEntry], position: usize, anchor: [u8; 16]) {
        let keys: Vec<String> = self
            .record
            .ledger
            .iter()
            .filter(|i| is_delta(i))
            .flat_map(|d| d.keys.iter().cloned())
            .collect();
        let mut shown: Vec<&KnowledgeEntry> = Vec::new();
        for k in &keys {
            if let Some(entry) = all.iter().find(|e| e.id == key_id(k))
                && !shown.iter().any(|s| s.id == entry.id)
            {
                shown.push(entry);
            }
        }
        self.record.ledger.retain(|i| !is_delta(i));
        self.record.ledger.push(Insertion {
            kind: InsertionKind::Delta,
            position: u32::try_from(position).unwrap_or(u32::MAX),
            anchor,
            text: delta(&shown),
            keys: shown.iter().map(|e| key(e)).collect(),
            created_at_ms: lore_storage::now_ms(),
        });
    }

    /// Asks the knowledge search again when knowledge changed (or was never asked).
    pub(super) fn refresh_candidates(&mut self, context: String, ctx: &mut Context<Self>) {
        if !self.services.ltm || self.asking {
            return;
        }
        let Some(finder) = self.services.finder.clone() else {
            return;
        };
        let epoch = self.store.knowledge_epoch().unwrap_or(0);
        let never_asked = self.record.ltm.pinned.is_none() && self.candidates.is_none();
        if !never_asked && epoch == self.record.ltm.epoch && !self.services.ltm_each_turn {
            return;
        }
        if !self.store.has_knowledge().unwrap_or(true) {
            // Nothing to find: answer at once instead of embedding the context for nothing.
            self.candidates_arrived(epoch, Vec::new(), &context);
            return;
        }
        self.asking = true;
        let project = self.knowledge_project();
        let context: String = context
            .chars()
            .rev()
            .take(SEARCH_CONTEXT_CHARS)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let search = finder.find(context.clone(), project, SEARCH_LIMIT);
        ctx.spawn(search.into_actor(self).map(move |found, actor, _| {
            actor.asking = false;
            actor.candidates_arrived(epoch, found, &context);
        }));
    }

    fn candidates_arrived(&mut self, epoch: u64, mut found: Vec<(String, f32)>, context: &str) {
        let since = self.record.ltm.checked_ms;
        self.record.ltm.epoch = epoch;
        self.record.ltm.checked_ms = lore_storage::now_ms();
        if since > 0 {
            // What was written since the last look and matches the conversation, even if the
            // search index has not committed it yet.
            let entries = self.knowledge();
            let project = self.knowledge_project();
            for (id, score) in recent_matches(&entries, context, since, project.as_deref()) {
                if !found.iter().any(|(known, _)| *known == id) {
                    found.push((id, score));
                }
            }
        }
        if self.record.ltm.pinned.is_none() || self.services.ltm_each_turn {
            self.candidates = Some(found);
            if let Err(err) = self.store.save_session(&self.record) {
                self.note_failure(&err.into());
            }
            return;
        }
        let entries = self.knowledge();
        let project = self.knowledge_project();
        let mut shown = self.record.ltm.keys.clone();
        shown.extend(self.record.ltm.pending.iter().cloned());
        for change in changes(&entries, &found, &shown, project.as_deref()) {
            let id = key_id(&change).to_string();
            self.record.ltm.pending.retain(|k| key_id(k) != id);
            self.record.ltm.pending.push(change);
        }
        if let Err(err) = self.store.save_session(&self.record) {
            self.note_failure(&err.into());
        }
    }
}

impl Handler<Candidates> for SessionActor {
    type Result = ();

    fn handle(&mut self, msg: Candidates, _: &mut Self::Context) {
        self.candidates_arrived(msg.epoch, msg.found, "");
    }
}
