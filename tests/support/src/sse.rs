//! Server-sent event frames and their paced delivery (intervals, stalls, aborts).

use crate::script::Delivery;
use bytes::Bytes;
use futures_util::Stream;
use serde_json::Value;
use std::time::Duration;

/// One SSE event, already serialized.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub bytes: Bytes,
    /// Whether it carries a text delta (paced by `Delivery::delta_interval`).
    pub text_delta: bool,
}

/// `event: <type>\ndata: <json>\n\n` (Anthropic, Responses).
pub(crate) fn named(event: &str, data: &Value, text_delta: bool) -> Frame {
    let json = serde_json::to_string(data).unwrap_or_default();
    Frame {
        bytes: Bytes::from(format!("event: {event}\ndata: {json}\n\n")),
        text_delta,
    }
}

/// `data: <json>\n\n` (OpenAI Chat).
pub(crate) fn data(data: &Value, text_delta: bool) -> Frame {
    let json = serde_json::to_string(data).unwrap_or_default();
    Frame {
        bytes: Bytes::from(format!("data: {json}\n\n")),
        text_delta,
    }
}

/// `data: [DONE]\n\n`.
pub(crate) fn done() -> Frame {
    Frame {
        bytes: Bytes::from_static(b"data: [DONE]\n\n"),
        text_delta: false,
    }
}

/// Pause before a scripted abort so the frames already produced reach the socket.
const FLUSH_GRACE: Duration = Duration::from_millis(30);

struct PaceState {
    frames: std::vec::IntoIter<Frame>,
    sent: usize,
    delivery: Delivery,
    aborted: bool,
}

/// The body stream: frames with their pauses; ends with an error (connection abort)
/// after `abort_after` frames when requested. `abort_after` is clamped so the last
/// (terminal) frame is never sent.
pub(crate) fn paced(
    frames: Vec<Frame>,
    mut delivery: Delivery,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + 'static {
    if let Some(a) = delivery.abort_after.as_mut() {
        *a = (*a).min(frames.len().saturating_sub(1));
    }
    let state = PaceState {
        frames: frames.into_iter(),
        sent: 0,
        delivery,
        aborted: false,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        if st.aborted {
            return None;
        }
        if st.delivery.abort_after == Some(st.sent) {
            st.aborted = true;
            // Let the server flush what was sent before the connection is dropped
            // (actix discards unflushed output when the body stream errors).
            tokio::time::sleep(FLUSH_GRACE).await;
            let err = std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "fake upstream: scripted broken stream",
            );
            return Some((Err(err), st));
        }
        let frame = st.frames.next()?;
        let mut pause = Duration::ZERO;
        if frame.text_delta
            && let Some(d) = st.delivery.delta_interval
        {
            pause = d;
        } else if st.sent > 0 {
            pause = st.delivery.event_interval;
        }
        if let Some((after, d)) = st.delivery.stall
            && after == st.sent
        {
            pause += d;
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        st.sent += 1;
        Some((Ok(frame.bytes), st))
    })
}

/// A non-streamed body cut in half and then aborted (BrokenStream on a JSON request).
pub(crate) fn truncated(
    body: Bytes,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + 'static {
    let half = body.slice(..body.len() / 2);
    // Stage 0: send half; stage 1: abort; stage 2: end.
    futures_util::stream::unfold((0u8, half), |(stage, half)| async move {
        match stage {
            0 => Some((Ok(half.clone()), (1, half))),
            1 => {
                tokio::time::sleep(FLUSH_GRACE).await;
                let err = std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "fake upstream: scripted broken response",
                );
                Some((Err(err), (2, half)))
            }
            _ => None,
        }
    })
}
