//! The count of conversation (non-worker) requests in flight: a guard taken when the request
//! reaches the handler and released when its response body has been completely produced, or
//! when the response (or the handler) is dropped, e.g. because the client went away.

use actix_web::body::{BodySize, BoxBody, MessageBody};
use bytes::Bytes;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// Requests in flight.
#[derive(Debug, Default)]
pub(crate) struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    /// Counts one more request until the guard drops.
    pub fn enter(&self) -> InFlightGuard {
        self.0.fetch_add(1, Ordering::SeqCst);
        InFlightGuard(Arc::clone(&self.0))
    }

    /// Requests in flight now.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// One request in flight.
#[derive(Debug)]
pub(crate) struct InFlightGuard(Arc<AtomicUsize>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that holds the guard until its last chunk (or an error) has been produced.
pub(crate) struct Guarded {
    body: BoxBody,
    guard: Option<InFlightGuard>,
}

impl Guarded {
    /// Wraps `body`; the request stays counted while it is being sent.
    pub fn new(body: BoxBody, guard: InFlightGuard) -> Guarded {
        Guarded {
            body,
            guard: Some(guard),
        }
    }
}

impl MessageBody for Guarded {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_next(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            this.guard = None;
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_count_until_dropped() {
        let flight = InFlight::default();
        let a = flight.enter();
        let b = flight.enter();
        assert_eq!(flight.count(), 2);
        drop(a);
        assert_eq!(flight.count(), 1);
        let body = Guarded::new(BoxBody::new(Bytes::from_static(b"x")), b);
        assert_eq!(flight.count(), 1);
        drop(body);
        assert_eq!(flight.count(), 0);
    }
}
