//! A turn's way through the session actor: its number and its mark on the activity board, the
//! capture of its messages, the ledger of insertions (found again in the request, this turn's
//! card and knowledge delta added), the context plan (layers, prefix, breakpoints) with the
//! ledger placed in the array it chose, and the answer to the handler, then the writes; a
//! prompt-too-long retry at a higher floor; and what the reply teaches the context manager.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use lore_proto::Reply;
use lore_storage::now_ms;
use tracing::{info, warn};

use super::{OpenTurn, Overflow, PrepareTurn, SessionActor, TurnPlan};
use crate::gradient::LogView;
use crate::gradient::calibrate::{ReplyFacts, after_reply, overflow_floor};
use crate::injection::{self, Placement};
use crate::turn::{ShapeArgs, shape};
use crate::worker::ContextReport;

/// Highest layer there is.
const TOP_LAYER: u8 = 4;

/// One planning of a turn.
struct ShapeOutcome {
    /// The body to send, when it differs from the open turn's.
    body: Option<Bytes>,
    /// The most input tokens the client is shown.
    report_cap: Option<u64>,
    /// Estimated tokens of the whole raw history.
    raw_tokens: u64,
    plan: crate::gradient::Plan,
    model: crate::catalogue::ModelInfo,
    /// The prefix holds fewer observation logs than the session has (its budget, or layers
    /// 3–4): past the consolidation threshold only a consolidation brings them back.
    logs_trimmed: bool,
}

impl SessionActor {
    /// Plans one turn and answers it, then stores what it captured.
    pub(super) fn prepare(&mut self, msg: PrepareTurn) {
        self.counters.turns += 1;
        let turn = self.next_turn;
        self.next_turn += 1;
        if let Some(board) = &self.board {
            let guard = board.started(&self.record.id, msg.route.clone());
            self.in_flight.insert(turn, guard);
        }
        drop(msg.unresolved);
        let snapshot = self.record.clone();
        let (new_messages, forked) = self.capture(
            &msg.request,
            &msg.identities,
            msg.protocol,
            msg.project.as_ref(),
        );
        let mut answer = TurnPlan {
            turn,
            ..TurnPlan::default()
        };
        // The one ledger of insertions: found again in this request, then this turn's card.
        crate::ledger::resolve(&mut self.record.ledger, &msg.identities);
        let mut body = msg.body.clone();
        let mut cards_in_messages = false;
        if let Some(cards) = &msg.cards {
            if let Some(new) = injection::consult_last(
                &self.record.id,
                &msg.request.messages,
                &msg.identities,
                &self.record.ledger,
                &cards.book,
                &cards.settings,
            ) {
                self.counters.cards_injected += new.keys.len() as u64;
                answer.injected = new.keys.clone();
                self.record.ledger.push(new);
            }
            match cards.settings.placement {
                Placement::User => cards_in_messages = true,
                Placement::System => {
                    match crate::ledger::in_system(msg.protocol, &msg.body, &self.record.ledger) {
                        Ok(Some(rewritten)) => body = Bytes::from(rewritten),
                        Ok(None) => {}
                        Err(err) => {
                            warn!(session = %self.record.id, error = %err, "cards could not go into the system prompt; sending the request without them");
                        }
                    }
                }
            }
        }
        // What goes when no context plan applies: the card blocks in their messages.
        let fallback = if cards_in_messages {
            self.cards_only(msg.protocol, &body, &msg.spans, msg.request.messages.len())
        } else {
            body.clone()
        };
        if fallback != msg.body {
            answer.body = Some(fallback.clone());
        }
        let mut open = OpenTurn {
            turn,
            request: Arc::clone(&msg.request),
            identities: Arc::clone(&msg.identities),
            spans: Arc::clone(&msg.spans),
            protocol: msg.protocol,
            body: body.clone(),
            fallback,
            cards_in_messages,
            context: msg.context.clone(),
            plan: None,
            model: None,
            tried: Vec::new(),
            expected_bust: false,
            calibrate: true,
            knowledge: crate::turn::Knowledge::default(),
        };
        if let Some(input) = &msg.context {
            let usable = self.usable_estimate(&msg.request, input);
            let knowledge = self.knowledge_for_turn(&msg.request, &msg.identities, usable);
            open.knowledge = knowledge;
        }
        if msg.context.is_some() {
            let previous = self.record.context.last_layer;
            let lifetime_ms = if self.record.context.ttl_1h {
                3_600_000
            } else {
                300_000
            };
            let cold = self.record.context.last_request_ms > 0
                && now_ms().saturating_sub(self.record.context.last_request_ms) >= lifetime_ms;
            if let Some(shaped) = self.shape_open(&open, 0) {
                answer.layer = shaped.plan.layer;
                answer.report_cap = shaped.report_cap;
                answer.client_tokens = shaped.plan.client_tokens;
                answer.sent_tokens = shaped.plan.total_tokens;
                answer.layer_changed = shaped.plan.layer != previous;
                if let Some(bytes) = shaped.body {
                    answer.body = Some(bytes);
                }
                open.tried.push(shaped.plan.layer);
                open.expected_bust =
                    shaped.plan.layer != previous || shaped.plan.prefix_changed || cold;
                if shaped.plan.layer != previous {
                    info!(session = %self.record.id, from = previous, to = shaped.plan.layer, reason = %shaped.plan.reason, "context layer changed");
                }
                if let Some(board) = &self.board {
                    let ahead = shaped.plan.urgent_distillation
                        || shaped.raw_tokens * 2
                            > shaped.plan.l0_cap.min(shaped.model.window(false));
                    let ttl = if shaped.plan.ttl_1h { 3_600 } else { 300 };
                    board.context_report(
                        &self.record.id,
                        ContextReport {
                            distil_ahead: ahead,
                            cache_ttl: Duration::from_secs(ttl),
                            prefix_trimmed: shaped.logs_trimmed,
                        },
                    );
                }
                open.plan = Some(shaped.plan);
                open.model = Some(shaped.model);
            }
        }
        answer.project = self.record.project.clone();
        // The turn before is dropped only once the handler has its answer (its parsed request
        // is the whole history).
        let previous = self.open.replace(open);
        self.open_turn = Some(turn);
        // The handler goes on now; the writes follow.
        let _ = msg.answer.send(answer);
        drop(previous);
        // The open turn holds the newer parse now.
        self.kept_parse = None;
        let path_changed = !new_messages.is_empty() || forked.is_some();
        if let Err(err) = self.commit(&new_messages, forked, path_changed) {
            // Nothing of this turn reached storage: forget it, the next request recaptures it.
            self.record = snapshot;
            self.note_failure(&err);
        }
    }

    /// `body` with the ledger's card blocks in their messages (layer 0, no context plan); the
    /// body itself when that fails (logged).
    fn cards_only(
        &self,
        protocol: lore_proto::Protocol,
        body: &Bytes,
        spans: &[Vec<u32>],
        messages: usize,
    ) -> Bytes {
        let blocks = crate::ledger::card_blocks(&self.record.ledger, messages);
        match crate::ledger::with_blocks(protocol, body, spans, &blocks) {
            Ok(Some(rewritten)) => Bytes::from(rewritten),
            Ok(None) => body.clone(),
            Err(err) => {
                warn!(session = %self.record.id, error = %err, "card blocks could not be placed; sending the request without them");
                body.clone()
            }
        }
    }

    /// The live observation logs of the session, as the planner sees them.
    fn logs(&mut self) -> (Vec<LogView>, u64) {
        let id = self.record.id.clone();
        let distillations = match self.store.session_distillations(&id) {
            Ok(found) => found,
            Err(err) => {
                warn!(session = %id, error = %err, "observation logs unreadable; planning without them");
                Vec::new()
            }
        };
        let through = self
            .store
            .distill_state(&id)
            .map(|state| state.next_seq)
            .unwrap_or(0);
        let logs = distillations
            .into_iter()
            .filter(|d| !d.archived)
            .map(|d| {
                let tokens = *self
                    .log_tokens
                    .entry(d.n)
                    .or_insert_with(|| crate::tokens::count(&d.observations) + 20);
                LogView {
                    n: d.n,
                    generation: d.generation,
                    tokens,
                    id: d.doc_id(),
                    text: d.observations,
                }
            })
            .collect();
        (logs, through)
    }

    /// Plans `open` (at `retry_floor` or above) and records the plan in the session state.
    fn shape_open(&mut self, open: &OpenTurn, retry_floor: u8) -> Option<ShapeOutcome> {
        let input = open.context.as_ref()?;
        let (logs, distilled_through) = self.logs();
        let mut estimated = Vec::new();
        let session_model = self.record.model.clone();
        let path = std::mem::take(&mut self.record.path);
        let args = ShapeArgs {
            services: &self.services,
            input,
            protocol: open.protocol,
            request: &open.request,
            identities: &open.identities,
            spans: &open.spans,
            body: &open.body,
            path: &path,
            session_model: session_model.as_deref(),
            logs: &logs,
            distilled_through,
            now_ms: now_ms(),
            retry_floor,
            knowledge: &open.knowledge,
            ledger: &self.record.ledger,
            cards_in_messages: open.cards_in_messages,
        };
        let shaped = shape(&args, &mut self.record.context, &mut estimated);
        self.record.path = path;
        // Remember every message's estimate, so a restart does not tokenize the history again.
        for (entry, tokens) in self.record.path.iter_mut().zip(&estimated) {
            if entry.tokens == 0 {
                entry.tokens = u32::try_from(*tokens).unwrap_or(u32::MAX);
            }
        }
        let logs_trimmed = shaped.plan.layer >= 1 && shaped.plan.prefix.len() < logs.len();
        Some(ShapeOutcome {
            logs_trimmed,
            body: shaped.body.map(Bytes::from),
            report_cap: shaped.report_cap,
            raw_tokens: estimated.iter().sum(),
            plan: shaped.plan,
            model: shaped.model,
        })
    }

    /// The messages' share of the window, roughly (for the long-term knowledge budget).
    fn usable_estimate(
        &self,
        request: &lore_proto::CanonicalRequest,
        input: &crate::turn::ContextInput,
    ) -> u64 {
        let model = request
            .model
            .as_deref()
            .or(self.record.model.as_deref())
            .unwrap_or("");
        let info = self.services.catalogue.lookup(model);
        let context = &self.record.context;
        let overhead = if context.calibrated {
            context.overhead.max(0.0) as u64
        } else {
            input.fixed_tokens + 1_000
        };
        info.window(input.long_context)
            .saturating_sub(info.output.min(32_000))
            .saturating_sub(overhead)
    }

    /// What the session talked about last: the latest messages and the reply, for the
    /// knowledge search.
    pub(super) fn recent_context(&self, reply: &Reply) -> String {
        let mut text = String::new();
        if let Some(open) = &self.open {
            let messages = &open.request.messages;
            for message in messages.iter().skip(messages.len().saturating_sub(6)) {
                text.push_str(&message.text());
                text.push('\n');
            }
        }
        if let Some(message) = &reply.message {
            text.push_str(&message.text());
        }
        text
    }

    /// The upstream refused the open turn as too long: raise the floor and plan again.
    pub(super) fn overflowed(&mut self, turn: u64, ratio: f64, limit: Option<u64>) -> Overflow {
        let Some(mut open) = self.open.take().filter(|open| open.turn == turn) else {
            return Overflow {
                tried: "the turn is no longer open".into(),
                ..Overflow::default()
            };
        };
        let floor = overflow_floor(ratio);
        let last = open.tried.last().copied().unwrap_or(0);
        // Each retry goes at least one layer higher than the attempt that failed.
        let next = floor.max(last + 1).min(TOP_LAYER);
        let tried_text = |tried: &[u8]| {
            tried
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        if last >= TOP_LAYER || open.context.is_none() {
            let tried = tried_text(&open.tried);
            self.open = Some(open);
            return Overflow {
                tried: format!(
                    "Lore sent this request at layer {tried}; even its smallest layer does not fit the model's window"
                ),
                ..Overflow::default()
            };
        }
        self.record.context.force_min_layer = self.record.context.force_min_layer.max(floor);
        if let Some(limit) = limit.filter(|limit| *limit > 0) {
            self.record.context.learned_window = limit;
        }
        info!(session = %self.record.id, ratio, floor, retry_layer = next, "prompt too long; planning again at a higher layer");
        let shaped = self.shape_open(&open, next);
        let mut answer = Overflow::default();
        if let Some(shaped) = shaped {
            open.tried.push(shaped.plan.layer);
            open.expected_bust = true;
            answer.layer = shaped.plan.layer;
            answer.body = Some(shaped.body.unwrap_or_else(|| open.fallback.clone()));
            open.plan = Some(shaped.plan);
            open.model = Some(shaped.model);
        }
        answer.tried = format!(
            "Lore sent this request at layer {} (ratio {ratio:.2})",
            tried_text(&open.tried)
        );
        if let Err(err) = self.store.save_session(&self.record) {
            self.note_failure(&err.into());
        }
        self.open = Some(open);
        answer
    }

    /// Folds a reply into the context manager's calibration.
    pub(super) fn learn(&mut self, turn: u64, reply: &Reply, plan_used: bool) {
        let Some(open) = self.open.as_ref().filter(|open| open.turn == turn) else {
            return;
        };
        let (Some(plan), Some(model)) = (&open.plan, &open.model) else {
            return;
        };
        let facts = ReplyFacts {
            usage: reply.usage,
            success: reply.complete || reply.message.is_some(),
            plan_used: plan_used && open.calibrate,
            sent_estimate: plan.message_tokens,
            layer: plan.layer,
            expected_bust: open.expected_bust,
            price: model.price,
        };
        after_reply(&mut self.record.context, &facts);
    }
}
