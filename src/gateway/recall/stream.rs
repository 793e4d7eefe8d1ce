//! A streamed response with the recall tool: the legs are read one after the other by a task on
//! the worker, and what the client should see goes through a channel that is the response body.
//! Each leg's reply is captured as its own turn; a client that goes away stops the task (and the
//! upstream call) at its next send.

use std::time::Duration;

use actix_web::error::PayloadError;
use awc::ClientResponse;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use lore_actors::TurnCompleted;
use lore_proto::{Protocol, SseDecoder, SseEvent, StreamAccumulator, new_accumulator};
use tokio::sync::mpsc;
use tracing::warn;

use super::anthropic_leg::AnthropicLeg;
use super::chat_leg::ChatLeg;
use super::responses_leg::ResponsesLeg;
use super::{LegCall, MAX_RECALL_DEPTH, Prefix, RecallRun};
use crate::gateway::relay::{Completion, error_event, keepalive_bytes};
use crate::gateway::turn::Turn;

/// Events buffered between the task and the client.
const CHANNEL_DEPTH: usize = 64;

/// The client's response body for a streamed, recall-aware reply.
pub(crate) fn relay(
    run: RecallRun,
    first: ClientResponse,
    turn: Option<Turn>,
    keepalive_after: Duration,
    usage_cap: Option<u64>,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>> {
    let (sender, mut receiver) = mpsc::channel::<Bytes>(CHANNEL_DEPTH);
    let completion = turn.map(|turn| turn.completion);
    let protocol = run.protocol;
    actix_rt::spawn(drive(run, first, completion, sender, keepalive_after));
    let receiver_stream = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
    receiver_stream.map(move |item| Ok(scale_usage(protocol, item, usage_cap)))
}

/// An event bound for the client with its usage scaled under the cap.
fn scale_usage(protocol: Protocol, item: Bytes, cap: Option<u64>) -> Bytes {
    let Some(cap) = cap else {
        return item;
    };
    let mut decoder = SseDecoder::new();
    let events = decoder.push(&item);
    if events.len() != 1 || !decoder.is_at_boundary() {
        return item;
    }
    let mut event = events.into_iter().next().unwrap_or_default();
    match lore_proto::rebuild::usage::scaled_event_data(protocol, &event.data, cap) {
        Ok(Some(data)) => {
            event.data = data;
            Bytes::from(event.encode())
        }
        _ => item,
    }
}

/// One leg, in either protocol.
enum Leg {
    Anthropic(AnthropicLeg),
    Chat(ChatLeg),
    Responses(ResponsesLeg),
}

impl Leg {
    fn first(protocol: Protocol) -> Self {
        match protocol {
            Protocol::Anthropic => Leg::Anthropic(AnthropicLeg::first()),
            Protocol::OpenAiChat => Leg::Chat(ChatLeg::first()),
            Protocol::OpenAiResponses => Leg::Responses(ResponsesLeg::first()),
        }
    }

    fn push(&mut self, event: &SseEvent) -> Vec<Bytes> {
        match self {
            Leg::Anthropic(leg) => leg.push(event),
            Leg::Chat(leg) => leg.push(event),
            Leg::Responses(leg) => leg.push(event),
        }
    }

    fn calls(&mut self) -> Vec<LegCall> {
        match self {
            Leg::Anthropic(leg) => leg.calls().to_vec(),
            Leg::Chat(leg) => leg.finish_calls().to_vec(),
            Leg::Responses(leg) => leg.calls().to_vec(),
        }
    }

    fn recall_only(&self) -> bool {
        match self {
            Leg::Anthropic(leg) => leg.recall_only(),
            Leg::Chat(leg) => leg.recall_only(),
            Leg::Responses(leg) => leg.recall_only(),
        }
    }

    fn markers(&self) -> Vec<Bytes> {
        match self {
            Leg::Anthropic(_) | Leg::Responses(_) => Vec::new(),
            Leg::Chat(leg) => leg.markers(),
        }
    }

    fn closing(&mut self) -> Vec<Bytes> {
        match self {
            Leg::Anthropic(leg) => leg.closing(),
            Leg::Chat(leg) => leg.closing(),
            Leg::Responses(leg) => leg.closing(),
        }
    }

    fn prefix(&self) -> Prefix {
        match self {
            Leg::Anthropic(leg) => Prefix::Blocks(leg.prefix()),
            Leg::Chat(leg) => Prefix::Text(leg.prefix().to_string()),
            Leg::Responses(leg) => Prefix::Items(leg.prefix()),
        }
    }

    fn next(&self) -> Self {
        match self {
            Leg::Anthropic(leg) => Leg::Anthropic(leg.next()),
            Leg::Chat(leg) => Leg::Chat(leg.next()),
            Leg::Responses(leg) => Leg::Responses(leg.next()),
        }
    }
}

/// How reading one leg ended.
enum Pumped {
    /// The upstream finished the leg.
    Done,
    /// The client went away.
    ClientGone,
    /// The upstream broke off.
    Broken(String),
}

async fn drive(
    mut run: RecallRun,
    mut upstream: ClientResponse,
    mut completion: Option<Completion>,
    sender: mpsc::Sender<Bytes>,
    keepalive_after: Duration,
) {
    let protocol = run.protocol;
    let mut leg = Leg::first(protocol);
    let mut depth = 0;
    let mut last = completion.clone();
    loop {
        let pumped = pump(
            &mut upstream,
            &mut leg,
            completion.take(),
            &sender,
            protocol,
            keepalive_after,
        )
        .await;
        match pumped {
            Pumped::Done => {}
            Pumped::ClientGone => return,
            Pumped::Broken(message) => {
                let _ = sender.send(error_event(protocol, &message)).await;
                return;
            }
        }
        let calls = leg.calls();
        if !send_all(&sender, leg.markers()).await {
            return;
        }
        if calls.is_empty() {
            send_all(&sender, leg.closing()).await;
            return;
        }
        let continuing = leg.recall_only() && depth < MAX_RECALL_DEPTH;
        let records = run.answer(&calls, continuing).await;
        if !continuing {
            send_all(&sender, leg.closing()).await;
            return;
        }
        match run.follow_up(leg.prefix(), &records, last.as_ref()).await {
            Ok((response, turn)) => {
                upstream = response;
                completion = turn;
                last = completion.clone();
                leg = leg.next();
                depth += 1;
            }
            Err(err) => {
                warn!(error = %err, "recall follow-up failed; ending the response after the marker");
                send_all(&sender, leg.closing()).await;
                return;
            }
        }
    }
}

/// Reads one leg to its end, sending the client what it should see, and captures the reply.
async fn pump(
    upstream: &mut ClientResponse,
    leg: &mut Leg,
    completion: Option<Completion>,
    sender: &mpsc::Sender<Bytes>,
    protocol: Protocol,
    keepalive_after: Duration,
) -> Pumped {
    let mut decoder = SseDecoder::new();
    let mut accumulator = new_accumulator(protocol);
    let outcome = loop {
        let next = match tokio::time::timeout(keepalive_after, upstream.next()).await {
            Ok(next) => next,
            Err(_) => {
                if sender.send(keepalive_bytes(protocol)).await.is_err() {
                    break Pumped::ClientGone;
                }
                continue;
            }
        };
        let chunk: Bytes = match next {
            None => {
                if let Some(event) = decoder.finish() {
                    accumulator.push(&event);
                    let out = leg.push(&event);
                    if !send_all(sender, out).await {
                        break Pumped::ClientGone;
                    }
                }
                break Pumped::Done;
            }
            Some(Err(err)) => break Pumped::Broken(broken(&err)),
            Some(Ok(chunk)) => chunk,
        };
        let mut gone = false;
        for event in decoder.push(&chunk) {
            accumulator.push(&event);
            if !send_all(sender, leg.push(&event)).await {
                gone = true;
                break;
            }
        }
        if gone {
            break Pumped::ClientGone;
        }
    };
    complete(completion, accumulator.as_ref());
    outcome
}

fn complete(completion: Option<Completion>, accumulator: &dyn StreamAccumulator) {
    if let Some(completion) = completion {
        completion.session.do_send(TurnCompleted {
            turn: completion.turn,
            reply: accumulator.reply(),
            plan_used: true,
        });
    }
}

fn broken(err: &PayloadError) -> String {
    warn!(error = %err, "upstream stream broke");
    format!("the upstream stream broke before the reply was complete: {err}")
}

async fn send_all(sender: &mpsc::Sender<Bytes>, items: Vec<Bytes>) -> bool {
    for item in items {
        if sender.send(item).await.is_err() {
            return false;
        }
    }
    true
}
