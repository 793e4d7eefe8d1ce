//! The fake's Responses WebSocket (`GET /v1/responses` with `Upgrade: websocket`), offered only
//! once a test calls [`crate::FakeUpstream::offer_websocket`]; otherwise the upgrade gets 404, as
//! from a provider that offers none. Each `response.create` message is recorded (method `WS`)
//! and answered like a streamed `POST /v1/responses` (the same scripts, the same events), one
//! message per event. `"generate": false` is answered with an empty completed response. As a
//! provider's connection does, it keeps its previous response: a `previous_response_id` naming
//! it stands for that response's input and output.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use actix_web::body::MessageBody;
use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::AggregatedMessage;
use bytes::Bytes;
use serde_json::{Value, json};

use crate::recording::RecordedRequest;
use crate::server::{Protocol, Shared, lock, respond_llm};

/// The upgrade: accepted only while the test has the WebSocket on.
pub(crate) async fn serve(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
) -> Result<HttpResponse, actix_web::Error> {
    if !shared.websocket.load(Ordering::SeqCst) {
        return Ok(
            HttpResponse::NotFound().json(json!({"error": {"message": "no WebSocket here"}}))
        );
    }
    let (response, mut session, stream) = actix_ws::handle(&req, payload)?;
    let mut stream = stream
        .max_frame_size(64 * 1024 * 1024)
        .aggregate_continuations()
        .max_continuation_size(64 * 1024 * 1024);
    actix_web::rt::spawn(async move {
        let mut previous: Option<(String, Vec<Value>)> = None;
        while let Some(Ok(message)) = stream.recv().await {
            let text = match message {
                AggregatedMessage::Text(text) => text.to_string(),
                AggregatedMessage::Ping(bytes) => {
                    let _ = session.pong(&bytes).await;
                    continue;
                }
                AggregatedMessage::Close(_) => break,
                _ => continue,
            };
            let Ok(Value::Object(mut create)) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            lock(&shared.requests).push(RecordedRequest {
                method: "WS".into(),
                path: req.path().to_string(),
                headers: Vec::new(),
                body: Bytes::from(text.clone()),
                received_at: SystemTime::now(),
            });
            create.remove("type");
            let generate = create
                .remove("generate")
                .and_then(|g| g.as_bool())
                .unwrap_or(true);
            let mut input = match create.remove("input") {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            let named = create
                .get("previous_response_id")
                .and_then(Value::as_str)
                .map(str::to_string);
            if let (Some(named), Some((id, items))) = (&named, &previous)
                && named == id
            {
                create.remove("previous_response_id");
                let mut whole = items.clone();
                whole.append(&mut input);
                input = whole;
            }
            create.insert("input".into(), Value::Array(input.clone()));
            let events = if generate {
                create.insert("stream".into(), Value::Bool(true));
                let body = Bytes::from(Value::Object(create).to_string());
                let answer = respond_llm(Protocol::Responses, &req, &body, &shared).await;
                let mut body = answer.into_body();
                let mut raw = Vec::new();
                while let Some(Ok(chunk)) = poll_fn(|cx| Pin::new(&mut body).poll_next(cx)).await {
                    raw.extend_from_slice(&chunk);
                }
                lore_proto::SseDecoder::new()
                    .push(&raw)
                    .into_iter()
                    .map(|event| event.data)
                    .filter(|data| !data.is_empty())
                    .collect()
            } else {
                let done = json!({"id": "resp_fake_prewarm", "object": "response", "status": "completed", "output": []});
                vec![
                    json!({"type": "response.created", "response": done}).to_string(),
                    json!({"type": "response.completed", "response": done}).to_string(),
                ]
            };
            for data in &events {
                if let Ok(event) = serde_json::from_str::<Value>(data)
                    && event["type"] == "response.completed"
                    && let Some(id) = event["response"]["id"].as_str()
                {
                    let mut items = input.clone();
                    items.extend(
                        event["response"]["output"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default(),
                    );
                    previous = Some((id.to_string(), items));
                }
            }
            for data in events {
                if session.text(data).await.is_err() {
                    return;
                }
            }
        }
        let _ = session.close(None).await;
    });
    Ok(response)
}
