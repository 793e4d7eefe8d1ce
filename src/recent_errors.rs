//! The latest warnings and errors the gateway logged, kept in memory for the dashboard's
//! overview (`GET /api/v1/overview`, "latest errors"). A `tracing` layer filtered to WARN and
//! above copies each event's message and fields into a small ring buffer; nothing is written
//! anywhere, and what the logs never carry (headers, keys, bodies) is not here either.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Mutex;

use serde::Serialize;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::Context;

/// Events kept; older ones are dropped.
pub const CAPACITY: usize = 50;

static EVENTS: Mutex<VecDeque<LoggedEvent>> = Mutex::new(VecDeque::new());

/// One logged warning or error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoggedEvent {
    /// When it was logged, ms since the epoch.
    pub at_ms: u64,
    /// `WARN` or `ERROR`.
    pub level: String,
    /// The module that logged it.
    pub target: String,
    /// The message and its fields as `name=value`.
    pub message: String,
}

/// The layer to add to the subscriber.
pub fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    RecentErrors.with_filter(LevelFilter::WARN)
}

/// The events kept, newest first.
pub fn latest() -> Vec<LoggedEvent> {
    let events = EVENTS.lock().unwrap_or_else(|p| p.into_inner());
    events.iter().rev().cloned().collect()
}

fn push(event: LoggedEvent) {
    let mut events = EVENTS.lock().unwrap_or_else(|p| p.into_inner());
    if events.len() == CAPACITY {
        events.pop_front();
    }
    events.push_back(event);
}

struct RecentErrors;

#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for RecentErrors {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let metadata = event.metadata();
        if *metadata.level() > Level::WARN {
            return;
        }
        let mut text = Text::default();
        event.record(&mut text);
        push(LoggedEvent {
            at_ms: lore_storage::now_ms(),
            level: metadata.level().to_string(),
            target: metadata.target().to_string(),
            message: format!("{}{}", text.message, text.fields),
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tracing_subscriber::prelude::*;

    #[test]
    fn warnings_are_kept_and_info_is_not() {
        let subscriber = tracing_subscriber::registry().with(layer());
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("not kept");
            tracing::warn!(file = "people/x.md", "card skipped");
        });
        let latest = latest();
        let kept = latest
            .iter()
            .find(|e| e.message.starts_with("card skipped"))
            .unwrap();
        assert_eq!(kept.level, "WARN");
        assert!(
            kept.message.contains("file=people/x.md"),
            "{}",
            kept.message
        );
        assert!(latest.iter().all(|e| e.message != "not kept"));
    }
}
