//! What a conversation turn cost and saved, priced from the catalogue (pure).
//!
//! `cost = input · p_in + cache_read · p_read + cache_write · p_write + output · p_out`, with
//! `p_write` the 1-hour price when the request asked for 1-hour cache entries (reference §20;
//! missing cache prices and `:free` models are the catalogue's business, see
//! [`crate::catalogue::Price::from_parts`]).
//!
//! Savings, each computed from the turn alone:
//! - cache: the tokens read from the cache priced at the input price, minus what they cost;
//! - gradient: the prompt tokens not sent (`passthrough − sent`, the session actor's
//!   estimates), priced at what this turn paid per prompt token on average (uncached, read and
//!   written tokens together), so a cheap cached regime is not credited at the full input price;
//! - what it cost: a turn whose context layers changed counts its cache writes as caused by Lore.

use lore_proto::Usage;
use lore_storage::costs::CostTotals;

use crate::catalogue::Price;

/// Output tokens the request estimate assumes at most (reference §20).
const ESTIMATE_OUTPUT_CAP: u64 = 16_384;

/// What the session actor knows about a turn besides the provider's usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnShape {
    /// The request asked for 1-hour cache entries.
    pub one_hour_writes: bool,
    /// Prompt tokens a passthrough proxy would have sent.
    pub passthrough_tokens: u64,
    /// Prompt tokens sent.
    pub sent_tokens: u64,
    /// The context layers changed on this turn (its cache writes are Lore's doing).
    pub layer_changed: bool,
}

fn per_million(tokens: u64, price: f64) -> f64 {
    tokens as f64 * price / 1_000_000.0
}

/// The cost, savings and token counts of one turn.
pub fn price_turn(price: &Price, usage: &Usage, shape: TurnShape) -> CostTotals {
    let write_price = if shape.one_hour_writes {
        price.cache_write_1h
    } else {
        price.cache_write
    };
    let input_usd = per_million(usage.input_tokens, price.input);
    let read_usd = per_million(usage.cache_read_input_tokens, price.cache_read);
    let write_usd = per_million(usage.cache_creation_input_tokens, write_price);
    let output_usd = per_million(usage.output_tokens, price.output);
    let prompt_tokens =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let prompt_usd = input_usd + read_usd + write_usd;
    let paid_per_token = if prompt_tokens > 0 {
        prompt_usd / prompt_tokens as f64
    } else {
        price.input / 1_000_000.0
    };
    let unsent = shape.passthrough_tokens.saturating_sub(shape.sent_tokens);
    let (write_5m, write_1h) = if shape.one_hour_writes {
        (0, usage.cache_creation_input_tokens)
    } else {
        (usage.cache_creation_input_tokens, 0)
    };
    CostTotals {
        calls: 1,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_input_tokens,
        cache_write_tokens: write_5m,
        cache_write_1h_tokens: write_1h,
        cost_usd: prompt_usd + output_usd,
        cache_read_usd: read_usd,
        cache_write_usd: write_usd,
        cache_savings_usd: per_million(usage.cache_read_input_tokens, price.input) - read_usd,
        passthrough_tokens: shape.passthrough_tokens,
        sent_tokens: shape.sent_tokens,
        gradient_savings_usd: unsent as f64 * paid_per_token,
        layer_changes: u64::from(shape.layer_changed),
        layer_change_write_usd: if shape.layer_changed { write_usd } else { 0.0 },
        failures: 0,
    }
}

/// The expected cost of a request before it is sent: its prompt as uncached input plus a
/// quarter of it as output (at most 16,384 tokens), reference §20.
pub fn estimate_request_cost(price: &Price, prompt_tokens: u64) -> f64 {
    let output = (prompt_tokens / 4).min(ESTIMATE_OUTPUT_CAP);
    per_million(prompt_tokens, price.input) + per_million(output, price.output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn a_turn_is_priced_per_kind_of_token() {
        // claude-sonnet-4: $3 / $15 / $0.30 / $3.75 per million.
        let price = Catalogue::builtin()
            .lookup("claude-sonnet-4-20250514")
            .price;
        let cost = price_turn(
            &price,
            &usage(1_000, 500, 10_000, 2_000),
            TurnShape::default(),
        );
        let expected = (1_000.0 * 3.0 + 500.0 * 15.0 + 10_000.0 * 0.3 + 2_000.0 * 3.75) / 1e6;
        assert!(close(cost.cost_usd, expected), "{cost:?}");
        assert!(close(cost.cache_read_usd, 0.003));
        assert!(close(cost.cache_write_usd, 0.0075));
        assert_eq!(
            (cost.cache_write_tokens, cost.cache_write_1h_tokens),
            (2_000, 0)
        );
        // Reads at $3 instead of $0.30: 10,000 × 2.70 / 1e6.
        assert!(close(cost.cache_savings_usd, 0.027));
    }

    #[test]
    fn one_hour_writes_cost_the_one_hour_price() {
        let price = Price::from_parts(3.0, 15.0, Some(0.3), Some(3.75), None);
        let five = price_turn(&price, &usage(0, 0, 0, 1_000_000), TurnShape::default());
        let hour = price_turn(
            &price,
            &usage(0, 0, 0, 1_000_000),
            TurnShape {
                one_hour_writes: true,
                ..Default::default()
            },
        );
        assert!(close(five.cost_usd, 3.75));
        assert!(close(hour.cost_usd, 6.0), "2 × input: {hour:?}");
        assert_eq!(hour.cache_write_1h_tokens, 1_000_000);
        assert_eq!(hour.cache_write_tokens, 0);
    }

    #[test]
    fn missing_prices_follow_the_reference_and_free_costs_nothing() {
        let price = Price::from_input_output(2.0, 8.0);
        let cost = price_turn(
            &price,
            &usage(0, 0, 1_000_000, 1_000_000),
            TurnShape::default(),
        );
        // Reads 0.1 × input, writes 1.25 × input.
        assert!(close(cost.cache_read_usd, 0.2));
        assert!(close(cost.cache_write_usd, 2.5));
        let free = Catalogue::builtin()
            .lookup("openrouter/some-model:free")
            .price;
        let cost = price_turn(
            &free,
            &usage(5_000, 5_000, 5_000, 5_000),
            TurnShape::default(),
        );
        assert_eq!(cost.cost_usd, 0.0);
        assert_eq!(cost.cache_savings_usd, 0.0);
        assert_eq!(cost.calls, 1);
    }

    #[test]
    fn gradient_savings_price_unsent_tokens_at_what_the_turn_paid() {
        let price = Price::from_parts(3.0, 15.0, Some(0.3), Some(3.75), None);
        // 100,000 prompt tokens, all read from the cache: $0.30/M paid on average.
        let shape = TurnShape {
            passthrough_tokens: 300_000,
            sent_tokens: 100_000,
            ..Default::default()
        };
        let cost = price_turn(&price, &usage(0, 0, 100_000, 0), shape);
        assert!(close(cost.gradient_savings_usd, 200_000.0 * 0.3 / 1e6));
        // Sending more than passthrough saves nothing (never negative).
        let more = TurnShape {
            passthrough_tokens: 10,
            sent_tokens: 20,
            ..Default::default()
        };
        assert_eq!(
            price_turn(&price, &usage(10, 0, 0, 0), more).gradient_savings_usd,
            0.0
        );
    }

    #[test]
    fn a_layer_change_counts_its_cache_writes_as_lore_s() {
        let price = Price::from_parts(3.0, 15.0, Some(0.3), Some(3.75), None);
        let shape = TurnShape {
            layer_changed: true,
            ..Default::default()
        };
        let cost = price_turn(&price, &usage(0, 0, 0, 1_000_000), shape);
        assert_eq!(cost.layer_changes, 1);
        assert!(close(cost.layer_change_write_usd, 3.75));
        let steady = price_turn(&price, &usage(0, 0, 0, 1_000_000), TurnShape::default());
        assert_eq!(steady.layer_change_write_usd, 0.0);
    }

    #[test]
    fn the_estimate_adds_a_quarter_as_output_capped() {
        let price = Price::from_input_output(3.0, 15.0);
        assert!(close(
            estimate_request_cost(&price, 4_000),
            (4_000.0 * 3.0 + 1_000.0 * 15.0) / 1e6
        ));
        let big = estimate_request_cost(&price, 1_000_000);
        assert!(close(big, (1_000_000.0 * 3.0 + 16_384.0 * 15.0) / 1e6));
    }
}
