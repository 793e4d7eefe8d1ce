//! The outgoing body of one turn: the session actor's context plan and its ledger of
//! insertions (cards, knowledge deltas; placed by [`crate::ledger`] once the plan has chosen
//! the array) applied to what the client sent, cache-stably, or the client's bytes when
//! nothing changes.
//!
//! - [`units`]: the conversation as the planner reads it, and the annotations of replaced
//!   outputs.
//! - [`render`]: a plan turned into bytes, with the cache breakpoints.

pub mod render;
pub mod units;

use std::sync::Arc;

use lore_proto::rebuild::usage::reported_input_cap;
use lore_proto::{CanonicalRequest, Protocol};
use lore_storage::{ContextRecord, PathEntry};
use tracing::warn;

use crate::catalogue::{Catalogue, ModelInfo};
use crate::gradient::pairing::validate;
use crate::gradient::{ContextSettings, LogView, Plan, PlanInput, plan};
use render::{CachePolicy, RenderInput, render_plan};
pub use render::{Knowledge, PlacedDelta};

/// What every session's context manager shares: the catalogue, the settings, and the
/// knowledge search that picks what system[2] pins.
#[derive(Clone)]
pub struct ContextServices {
    /// The model catalogue with `LORE_MODEL_OVERRIDES`.
    pub catalogue: Arc<Catalogue>,
    /// The settings.
    pub settings: ContextSettings,
    /// Long-term knowledge in the prompt (`LORE_LTM`, default on).
    pub ltm: bool,
    /// `LORE_LTM=each-turn`, the benchmarks' baseline: system[2] is searched and rendered again
    /// on every turn (no pin, no deltas), as a naive memory layer would.
    pub ltm_each_turn: bool,
    /// The hybrid search over knowledge, once the gateway has one.
    pub finder: Option<Arc<dyn crate::ltm::KnowledgeFinder>>,
}

impl std::fmt::Debug for ContextServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextServices")
            .field("settings", &self.settings)
            .field("ltm", &self.ltm)
            .field("ltm_each_turn", &self.ltm_each_turn)
            .field("finder", &self.finder.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ContextServices {
    fn default() -> Self {
        Self {
            catalogue: Catalogue::builtin(),
            settings: ContextSettings::default(),
            ltm: true,
            ltm_each_turn: false,
            finder: None,
        }
    }
}

/// What the HTTP layer knows about a request that the plan depends on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextInput {
    /// The request asked for Anthropic's 1M-context beta.
    pub long_context: bool,
    /// The upstream is Anthropic's own API (1-hour cache lifetimes are honoured).
    pub native_anthropic: bool,
    /// Estimated tokens of the system prompt and the tool definitions.
    pub fixed_tokens: u64,
    /// Why the provider manages the context itself (`previous_response_id`,
    /// `context_management`), when it does.
    pub provider_managed: Option<String>,
    /// Daily-budget pressure, 0–1.
    pub budget_pressure: f64,
}

/// One turn's shaping.
#[derive(Debug, Clone)]
pub struct Shaped {
    /// The body to send instead of the client's; `None` sends the client's bytes.
    pub body: Option<Vec<u8>>,
    /// The plan (a passthrough when shaping failed).
    pub plan: Plan,
    /// The model's figures.
    pub model: ModelInfo,
    /// The most input tokens the client is shown in the reply's usage.
    pub report_cap: Option<u64>,
}

/// Everything one shaping reads besides the session state.
pub struct ShapeArgs<'a> {
    /// Shared settings.
    pub services: &'a ContextServices,
    /// Per-request facts.
    pub input: &'a ContextInput,
    /// Wire protocol.
    pub protocol: Protocol,
    /// The parsed request (adjacent assistant items merged).
    pub request: &'a CanonicalRequest,
    /// Identities of its messages.
    pub identities: &'a [[u8; 16]],
    /// Wire elements of each message.
    pub spans: &'a [Vec<u32>],
    /// The body as it would be forwarded.
    pub body: &'a [u8],
    /// The session's path (aligned with the messages when it holds them).
    pub path: &'a [PathEntry],
    /// The model the session used last, when the request names none.
    pub session_model: Option<&'a str>,
    /// The session's live observation logs.
    pub logs: &'a [LogView],
    /// Messages with a lower `seq` are covered by a log.
    pub distilled_through: u64,
    /// Now, ms since the epoch.
    pub now_ms: u64,
    /// A floor for this attempt only (a prompt-too-long retry).
    pub retry_floor: u8,
    /// Long-term knowledge to add in the system prompt (system[1], system[2]).
    pub knowledge: &'a Knowledge,
    /// The session's ledger of insertions (cards, deltas), resolved against this request;
    /// placed once the plan has chosen the array ([`crate::ledger::place`]).
    pub ledger: &'a [crate::ledger::Insertion],
    /// Card blocks go into their messages (false: the system prompt already has them).
    pub cards_in_messages: bool,
}

/// Estimated tokens of the turn's knowledge blocks and deltas.
fn knowledge_tokens(knowledge: &Knowledge) -> u64 {
    let texts = knowledge
        .stable
        .iter()
        .chain(knowledge.pinned.iter())
        .chain(knowledge.deltas.iter().map(|d| &d.text));
    texts.map(|text| crate::tokens::count(text) + 20).sum()
}

/// Plans the turn and renders it; `state` records the plan. Anything that fails sends the
/// client's bytes (and leaves `state` as it was), logged.
pub fn shape(args: &ShapeArgs<'_>, state: &mut ContextRecord, estimated: &mut Vec<u64>) -> Shaped {
    let model_name = args
        .request
        .model
        .as_deref()
        .or(args.session_model)
        .unwrap_or("");
    let model = args.services.catalogue.lookup(model_name);
    let units = units::units_of(
        &args.request.messages,
        args.identities,
        args.path,
        estimated,
    );
    let before = state.clone();
    let input = PlanInput {
        units: &units,
        model: &model,
        long_context: args.input.long_context,
        settings: &args.services.settings,
        logs: args.logs,
        distilled_through: args.distilled_through,
        fixed_tokens: args.input.fixed_tokens,
        ltm_tokens: knowledge_tokens(args.knowledge) + crate::ledger::tokens(args.ledger),
        provider_managed: args.input.provider_managed.as_deref(),
        rewritten: false,
        budget_pressure: args.input.budget_pressure,
        now_ms: args.now_ms,
        retry_floor: args.retry_floor,
    };
    let planned = plan(&input, state);
    let report_cap = (args.services.settings.enabled && args.input.provider_managed.is_none())
        .then(|| {
            reported_input_cap(
                model.window(args.input.long_context),
                model.output,
                args.input.long_context,
            )
        });
    let deltas = args
        .ledger
        .iter()
        .any(|entry| entry.kind == crate::ledger::InsertionKind::Delta);
    // Nothing but cards at layer 0: the session actor puts them in the client's bytes.
    if planned.layer == 0 && args.knowledge.is_empty() && !deltas {
        return Shaped {
            body: None,
            plan: planned,
            model,
            report_cap,
        };
    }
    // The ledger's insertions go in once the plan has chosen the array.
    let start = if planned.layer > 0 { planned.start } else { 0 };
    let placed = crate::ledger::place(args.ledger, &units, start, args.cards_in_messages);
    let knowledge = Knowledge {
        stable: args.knowledge.stable.clone(),
        pinned: args.knowledge.pinned.clone(),
        deltas: placed.pairs,
    };
    let rendered = validate(&units, &planned)
        .map_err(|err| err.to_string())
        .and_then(|()| {
            crate::ledger::with_blocks(args.protocol, args.body, args.spans, &placed.blocks)
                .map_err(|err| err.to_string())
        })
        .and_then(|with_cards| {
            let body = with_cards.as_deref().unwrap_or(args.body);
            let annotations =
                units::annotations(&args.request.messages, &planned.strip, &planned.duplicates);
            render_plan(&RenderInput {
                protocol: args.protocol,
                body,
                spans: args.spans,
                plan: &planned,
                logs: args.logs,
                annotations: &annotations,
                cache: CachePolicy {
                    native_anthropic: args.input.native_anthropic,
                },
                knowledge: &knowledge,
            })
            .map_err(|err| err.to_string())
        });
    match rendered {
        Ok(body) => Shaped {
            body: Some(body),
            plan: planned,
            model,
            report_cap,
        },
        Err(err) => {
            warn!(error = %err, layer = planned.layer, "context plan could not be applied; sending the request unchanged");
            *state = before;
            let mut fallback = planned;
            fallback.layer = 0;
            fallback.reason = format!("plan failed ({err}); sent unchanged");
            Shaped {
                body: None,
                plan: fallback,
                model,
                report_cap,
            }
        }
    }
}

#[cfg(test)]
mod tests;
