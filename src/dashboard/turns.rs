//! One session's turns as the dashboard charts them: per reply on the path, the prompt tokens,
//! cache reads and writes, the context layer the turn was sent at (`None` for replies stored
//! before layers were kept, or not planned by the context manager), and what the reply cost,
//! priced from its stored usage with the catalogue in force (`lore_actors::costs::pricing`,
//! the cost tracker's own pricing; cache writes at the 5-minute price, since a reply does not
//! record the lifetime its request asked for).

use lore_actors::catalogue::Catalogue;
use lore_actors::costs::pricing::{TurnShape, price_turn};
use lore_proto::Usage;
use lore_storage::{MessageSource, StoredMessage};
use serde::Serialize;

/// The usage and cost of one turn's reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnUsage {
    /// 1 for the first reply on the path.
    pub turn: usize,
    /// Sequence number of the reply.
    pub seq: u64,
    /// When it was captured.
    pub created_at_ms: u64,
    /// Model that answered.
    pub model: Option<String>,
    /// Prompt tokens in all: uncached input + cache reads + cache writes.
    pub prompt_tokens: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// The context layer (0–4) the turn was sent at; `None`: not recorded.
    pub context_layer: Option<u8>,
    /// What the reply cost, US dollars.
    pub cost_usd: f64,
    /// Of which uncached input.
    pub input_usd: f64,
    /// Of which cache reads.
    pub cache_read_usd: f64,
    /// Of which cache writes (5-minute price).
    pub cache_write_usd: f64,
    /// Of which output.
    pub output_usd: f64,
    /// The catalogue entry it was priced as.
    pub priced_as: String,
}

/// Every reply on `messages` that carries usage, in order, priced with `catalogue`
/// (`fallback_model` for a reply that names no model).
pub fn turn_usage(
    messages: &[StoredMessage],
    catalogue: &Catalogue,
    fallback_model: Option<&str>,
) -> Vec<TurnUsage> {
    messages
        .iter()
        .filter(|m| m.source == MessageSource::Response)
        .filter_map(|m| m.usage.as_ref().map(|u| (m, u)))
        .enumerate()
        .map(|(index, (m, u))| priced(index + 1, m, u, catalogue, fallback_model))
        .collect()
}

fn priced(
    turn: usize,
    m: &StoredMessage,
    u: &Usage,
    catalogue: &Catalogue,
    fallback_model: Option<&str>,
) -> TurnUsage {
    let model = m.model.as_deref().or(fallback_model).unwrap_or("");
    let info = catalogue.lookup(model);
    let cost = price_turn(&info.price, u, TurnShape::default());
    let input_usd = u.input_tokens as f64 * info.price.input / 1e6;
    let output_usd = u.output_tokens as f64 * info.price.output / 1e6;
    TurnUsage {
        turn,
        seq: m.seq,
        created_at_ms: m.created_at_ms,
        model: m.model.clone(),
        prompt_tokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
        input_tokens: u.input_tokens,
        cache_read_tokens: u.cache_read_input_tokens,
        cache_write_tokens: u.cache_creation_input_tokens,
        output_tokens: u.output_tokens,
        context_layer: m.context_layer,
        cost_usd: cost.cost_usd,
        input_usd,
        cache_read_usd: cost.cache_read_usd,
        cache_write_usd: cost.cache_write_usd,
        output_usd,
        priced_as: info.matched,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lore_proto::{Message, Part, Role};
    use lore_storage::records::RECORD_VERSION;

    fn reply(seq: u64, layer: Option<u8>, usage: Usage) -> StoredMessage {
        let message = Message::new(Role::Assistant, vec![Part::Text { text: "ok".into() }]);
        StoredMessage {
            version: RECORD_VERSION,
            session_id: "s".into(),
            seq,
            position: seq as u32,
            identity: message.identity(),
            message,
            source: MessageSource::Response,
            created_at_ms: 0,
            model: Some("claude-sonnet-4-5-20250929".into()),
            usage: Some(usage),
            partial: false,
            context_layer: layer,
        }
    }

    #[test]
    fn each_reply_is_priced_by_kind_of_token_with_its_layer() {
        let usage = Usage {
            input_tokens: 1_000,
            output_tokens: 500,
            cache_read_input_tokens: 10_000,
            cache_creation_input_tokens: 2_000,
        };
        let turns = turn_usage(
            &[reply(1, None, usage), reply(3, Some(2), usage)],
            &Catalogue::builtin(),
            None,
        );
        assert_eq!(turns.len(), 2);
        assert_eq!(
            (turns[0].context_layer, turns[1].context_layer),
            (None, Some(2))
        );
        // claude-sonnet-4: $3 / $15 / $0.30 / $3.75 per million.
        let expected = (1_000.0 * 3.0 + 500.0 * 15.0 + 10_000.0 * 0.3 + 2_000.0 * 3.75) / 1e6;
        let t = &turns[1];
        assert!((t.cost_usd - expected).abs() < 1e-12, "{t:?}");
        let parts = t.input_usd + t.cache_read_usd + t.cache_write_usd + t.output_usd;
        assert!((parts - t.cost_usd).abs() < 1e-12);
        assert_eq!(t.priced_as, "claude-sonnet-4");
        assert_eq!((t.turn, t.prompt_tokens), (2, 13_000));
    }
}
