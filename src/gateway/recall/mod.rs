//! The recall tool in the gateway.
//!
//! A request that already carries tools gets `recall` as its last tool. When the model calls it,
//! the client never sees the call: the call becomes a text marker. If the model called recall
//! and nothing else, the gateway answers the call, asks the upstream again with the result (a
//! follow-up, up to [`MAX_RECALL_DEPTH`] times) and continues the same client response with the
//! new reply. If it came with client tools, the client gets those, and the recall result reaches
//! the model on the next turn, when the marker is expanded back into the call and its result
//! ([`lore_proto::recall_tool::expand`]). Every answered call is kept in storage by its marker
//! key, so a restart loses nothing.
//!
//! * [`anthropic_leg`], [`chat_leg`], [`responses_leg`]: one upstream stream of a response,
//!   event by event.
//! * [`stream`]: the streamed response across legs; [`json`]: the same for JSON replies.

pub(crate) mod anthropic_leg;
pub(crate) mod chat_leg;
pub(crate) mod json;
pub(crate) mod responses_leg;
pub(crate) mod stream;

use actix_web::http::Method;
use actix_web::http::header::HeaderMap;
use actix_web::web;
use awc::ClientResponse;
use bytes::Bytes;
use lore_proto::Protocol;
use lore_proto::recall_tool::{
    RecallArguments, RecallRecord, anthropic_followup, chat_followup, expand_markers,
    responses_followup, with_recall_tool,
};
use lore_storage::now_ms;
use serde_json::Value;
use tracing::{debug, warn};

use crate::gateway::forward::{self, Outbound, UpstreamClient};
use crate::gateway::relay::Completion;
use crate::server::AppState;

/// Most follow-ups one client response may take.
pub(crate) const MAX_RECALL_DEPTH: usize = 10;

/// One recall call of a leg, with the marker the client sees in its place.
#[derive(Debug, Clone)]
pub(crate) struct LegCall {
    /// The marker key (`r:…`).
    pub key: String,
    /// The model's call id.
    pub call_id: String,
    /// The arguments as compact JSON.
    pub input: String,
    /// The marker text.
    pub marker: String,
}

/// What a follow-up needs: where the request went and how.
pub(crate) struct RecallRun {
    pub state: web::Data<AppState>,
    pub client: web::Data<UpstreamClient>,
    pub url: String,
    pub headers: HeaderMap,
    pub protocol: Protocol,
    /// The body the upstream got last (the original, then each follow-up).
    pub body: Bytes,
    /// The asking session, for scope `session` and `project`.
    pub session_id: Option<String>,
    /// The session's project and the request's model, for pricing each follow-up.
    pub project: Option<String>,
    pub model: Option<String>,
}

/// What the model produced before its recall calls, for the follow-up: Anthropic blocks, Chat
/// text, or Responses output items.
pub(crate) enum Prefix {
    Blocks(Vec<Value>),
    Text(String),
    Items(Vec<Value>),
}

impl RecallRun {
    /// Answers each call and keeps its record; `continued` says the gateway goes on itself.
    pub(crate) async fn answer(&self, calls: &[LegCall], continued: bool) -> Vec<RecallRecord> {
        let mut records = Vec::with_capacity(calls.len());
        for call in calls {
            let arguments = RecallArguments::parse(&call.input);
            let result =
                crate::recall::answer_tool(&self.state, self.session_id.as_deref(), &arguments)
                    .await;
            let record = RecallRecord {
                key: call.key.clone(),
                call_id: call.call_id.clone(),
                input: call.input.clone(),
                result,
                continued,
                created_at_ms: now_ms(),
            };
            // Durable before the client can see the end of the response, so the marker expands
            // even after a crash.
            let store = self.state.store.clone();
            let kept = record.clone();
            let stored =
                web::block(move || store.put_recall(&kept).and_then(|()| store.flush())).await;
            match stored {
                Ok(Ok(())) => {}
                Ok(Err(err)) => {
                    warn!(error = %err, "could not keep a recall result; its marker will stay text")
                }
                Err(err) => {
                    warn!(error = %err, "could not keep a recall result; its marker will stay text")
                }
            }
            records.push(record);
        }
        debug!(calls = records.len(), continued, "recall answered");
        records
    }

    /// Sends the follow-up carrying `records` and captures it as a turn of the session.
    pub(crate) async fn follow_up(
        &mut self,
        prefix: Prefix,
        records: &[RecallRecord],
        continued: Option<&Completion>,
    ) -> Result<(ClientResponse, Option<Completion>), String> {
        let body = match prefix {
            Prefix::Blocks(blocks) => anthropic_followup(&self.body, &blocks, records),
            Prefix::Text(text) => chat_followup(&self.body, &text, records),
            Prefix::Items(items) => responses_followup(&self.body, &items, records),
        }
        .map_err(|err| err.to_string())?;
        let before = lore_proto::parse_request(self.protocol, &self.body)
            .map(|request| request.messages.len())
            .unwrap_or(0);
        self.body = Bytes::from(body);
        // The session stores what the follow-up adds (the recall call and its result) on its
        // own history, as the continuation of the same turn.
        let turn = match continued {
            Some(completion) => {
                let appended = lore_proto::parse_request(self.protocol, &self.body)
                    .map(|request| request.messages.into_iter().skip(before).collect())
                    .unwrap_or_default();
                let opened = completion
                    .session
                    .send(lore_actors::FollowUp {
                        after: completion.turn,
                        appended,
                    })
                    .await
                    .ok()
                    .flatten();
                opened.map(|turn| Completion {
                    session: completion.session.clone(),
                    turn,
                })
            }
            None => None,
        };
        let outbound = Outbound {
            method: Method::POST,
            url: &self.url,
            client_headers: &self.headers,
            extra_headers: &self.state.config.extra_headers,
            body: self.body.clone(),
        };
        let response = forward::send(&self.client, &outbound, &self.state.config.retry)
            .await
            .map_err(|err| err.to_string())?;
        if !response.status().is_success() {
            return Err(format!(
                "the upstream answered the recall follow-up with {}",
                response.status()
            ));
        }
        // Each leg is a call the provider bills: its usage is read before the legs are merged.
        let response = crate::gateway::costs_hook::on_follow_up(
            &self.state,
            response,
            self.protocol,
            (self.session_id.as_deref(), self.project.as_deref()),
            self.model.as_deref(),
            &self.body,
        );
        Ok((response, turn))
    }
}

/// Adds the usage of one more leg to `total`: counts add up, anything else (nested details)
/// is taken from the later leg.
pub(crate) fn add_usage(
    total: &mut serde_json::Map<String, Value>,
    more: &serde_json::Map<String, Value>,
) {
    for (key, value) in more {
        let sum = total
            .get(key)
            .and_then(Value::as_u64)
            .zip(value.as_u64())
            .map(|(before, now)| Value::from(before + now));
        total.insert(key.clone(), sum.unwrap_or_else(|| value.clone()));
    }
}

/// The body with every recall marker expanded, when it has any the store knows.
pub(crate) fn expand(state: &AppState, protocol: Protocol, body: &Bytes) -> Option<Bytes> {
    let store = &state.store;
    let lookup = |key: &str| store.recall_record(key).ok().flatten();
    match expand_markers(protocol, body, &lookup) {
        Ok(expanded) => expanded.map(Bytes::from),
        Err(err) => {
            warn!(error = %err, "recall markers could not be expanded; forwarding as sent");
            None
        }
    }
}

/// The body with the recall tool added, when the request has tools and recall is on.
pub(crate) fn inject(state: &AppState, protocol: Protocol, body: &Bytes) -> Option<Bytes> {
    if !state.config.recall_tool {
        return None;
    }
    match with_recall_tool(protocol, body) {
        Ok(injected) => injected.map(Bytes::from),
        Err(err) => {
            debug!(error = %err, "recall tool not added");
            None
        }
    }
}
