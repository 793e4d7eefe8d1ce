//! Worker prices: what one million tokens of a model cost, and the cost of one call's usage.
//!
//! Pure. The table is small and approximate on purpose: it feeds the worker usage ledger
//! (`lore costs`), not a bill. `LORE_WORKER_PRICE` overrides it ([`Price::parse`]).

use lore_storage::memory::UsageTotals;

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Input read from the provider's prompt cache.
    pub cache_read: f64,
    /// Input written to the provider's prompt cache.
    pub cache_write: f64,
}

impl Price {
    /// A price from input and output alone: cache reads at 0.1 × input, cache writes at
    /// 1.25 × input (the providers' usual ratios).
    pub fn from_input_output(input: f64, output: f64) -> Self {
        Self {
            input,
            output,
            cache_read: input * 0.1,
            cache_write: input * 1.25,
        }
    }

    /// Nothing to pay (`:free` models).
    pub const FREE: Price = Price {
        input: 0.0,
        output: 0.0,
        cache_read: 0.0,
        cache_write: 0.0,
    };

    /// Reads `LORE_WORKER_PRICE`: `"<input>,<output>"` in US dollars per million tokens,
    /// e.g. `"0.8,4"`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!(
                "LORE_WORKER_PRICE must be \"<input>,<output>\" in US dollars per million tokens (e.g. \"0.8,4\"); {why}"
            )
        };
        let (input, output) = text
            .split_once(',')
            .ok_or_else(|| bad(&format!("got {text:?}, which has no comma")))?;
        let number = |part: &str, what: &str| -> Result<f64, String> {
            let value: f64 = part.trim().parse().map_err(|_| {
                bad(&format!(
                    "the {what} price {:?} is not a number",
                    part.trim()
                ))
            })?;
            if value.is_finite() && value >= 0.0 {
                Ok(value)
            } else {
                Err(bad(&format!(
                    "the {what} price {value} must be zero or more"
                )))
            }
        };
        Ok(Self::from_input_output(
            number(input, "input")?,
            number(output, "output")?,
        ))
    }
}

/// List prices, USD per million tokens: input, output, cache read, cache write (`None`:
/// 1.25 × input). Sources: anthropic.com/pricing and openai.com/api/pricing, as of 2025-10.
/// Matched by the longest prefix of the normalised model name (dots read as dashes).
const TABLE: &[(&str, f64, f64, f64, Option<f64>)] = &[
    ("claude-opus-4", 5.0, 25.0, 0.5, Some(6.25)),
    ("claude-sonnet-4", 3.0, 15.0, 0.3, Some(3.75)),
    ("claude-haiku-4", 1.0, 5.0, 0.1, Some(1.25)),
    ("claude-3-5-haiku", 0.8, 4.0, 0.08, Some(1.0)),
    ("gpt-5-nano", 0.05, 0.4, 0.005, None),
    ("gpt-5-mini", 0.25, 2.0, 0.025, None),
    ("gpt-5", 1.25, 10.0, 0.125, None),
    ("gpt-4.1-mini", 0.4, 1.6, 0.1, None),
    ("gpt-4.1", 2.0, 8.0, 0.5, None),
    ("gpt-4o-mini", 0.15, 0.6, 0.075, None),
    ("gpt-4o", 2.5, 10.0, 1.25, None),
];

/// What an unknown model is charged: a mid-range model, so costs are not under-reported.
const UNKNOWN: Price = Price {
    input: 3.0,
    output: 15.0,
    cache_read: 0.3,
    cache_write: 3.75,
};

/// The model name without a `provider/` prefix, a `:variant` suffix or a date suffix,
/// lowercased, with dots read as dashes (`anthropic/claude-3.5-haiku` → `claude-3-5-haiku`).
fn normalise(model: &str) -> String {
    let name = model.rsplit('/').next().unwrap_or(model);
    let name = name.split(':').next().unwrap_or(name);
    let mut name = name.trim().to_ascii_lowercase().replace('.', "-");
    for len in [11, 9] {
        // `-2024-08-06` (11 chars) or `-20250929` (9 chars).
        if name.len() > len {
            let (head, tail) = name.split_at(name.len() - len);
            let digits = tail.chars().filter(char::is_ascii_digit).count();
            let dashes = tail.chars().filter(|c| *c == '-').count();
            if tail.starts_with('-') && digits + dashes == len && digits == 8 {
                name = head.to_string();
                break;
            }
        }
    }
    name
}

/// The price of `model` (an OpenRouter `provider/model` name is understood; `:free` costs
/// nothing; an unknown model gets a mid-range price).
pub fn price_for(model: &str) -> Price {
    if model.trim().to_ascii_lowercase().ends_with(":free") {
        return Price::FREE;
    }
    let name = normalise(model);
    TABLE
        .iter()
        .filter(|(prefix, ..)| name.starts_with(&prefix.replace('.', "-")))
        .max_by_key(|(prefix, ..)| prefix.len())
        .map_or(UNKNOWN, |&(_, input, output, cache_read, cache_write)| {
            Price {
                input,
                output,
                cache_read,
                cache_write: cache_write.unwrap_or(input * 1.25),
            }
        })
}

/// What `usage` cost at `price`, in US dollars.
pub fn cost(usage: &UsageTotals, price: Price) -> f64 {
    (usage.input_tokens as f64 * price.input
        + usage.output_tokens as f64 * price.output
        + usage.cache_read_tokens as f64 * price.cache_read
        + usage.cache_write_tokens as f64 * price.cache_write)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn known_models_match_their_longest_prefix() {
        assert_eq!(price_for("claude-sonnet-4-5-20250929").input, 3.0);
        assert_eq!(price_for("claude-opus-4-1").output, 25.0);
        assert_eq!(price_for("claude-haiku-4-5").cache_write, 1.25);
        assert_eq!(price_for("claude-3-5-haiku-20241022").input, 0.8);
        assert_eq!(price_for("gpt-5-nano").input, 0.05);
        assert_eq!(price_for("gpt-5-mini-2025-08-07").input, 0.25);
        assert_eq!(price_for("gpt-5").output, 10.0);
        assert_eq!(price_for("gpt-4.1-mini").input, 0.4);
        assert_eq!(price_for("gpt-4.1").input, 2.0);
        assert_eq!(price_for("gpt-4o-mini").input, 0.15);
        assert_eq!(price_for("gpt-4o-2024-08-06").input, 2.5);
        assert!(close(price_for("gpt-4o").cache_write, 2.5 * 1.25));
    }

    #[test]
    fn openrouter_names_and_free_models() {
        assert_eq!(price_for("anthropic/claude-3.5-haiku").input, 0.8);
        assert_eq!(price_for("anthropic/claude-haiku-4.5").input, 1.0);
        assert_eq!(price_for("openai/gpt-4.1-mini").output, 1.6);
        assert_eq!(price_for("openai/gpt-5-mini:nitro").input, 0.25);
        assert_eq!(
            price_for("meta-llama/llama-3.3-70b-instruct:free"),
            Price::FREE
        );
    }

    #[test]
    fn unknown_models_get_the_mid_range_price() {
        assert_eq!(price_for("mystery-model"), UNKNOWN);
        assert_eq!(price_for(""), UNKNOWN);
    }

    #[test]
    fn dates_are_stripped_but_not_version_numbers() {
        assert_eq!(normalise("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
        assert_eq!(normalise("gpt-4o-2024-08-06"), "gpt-4o");
        assert_eq!(normalise("openai/GPT-4.1"), "gpt-4-1");
        assert_eq!(normalise("claude-3-5-haiku"), "claude-3-5-haiku");
    }

    #[test]
    fn cost_sums_every_kind_of_token() {
        let usage = UsageTotals {
            calls: 1,
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 2_000_000,
            cache_write_tokens: 400_000,
            ..UsageTotals::default()
        };
        let price = price_for("claude-sonnet-4-5");
        assert!(close(cost(&usage, price), 3.0 + 1.5 + 0.6 + 1.5));
        assert!(close(cost(&UsageTotals::default(), price), 0.0));
    }

    #[test]
    fn overrides_parse_with_derived_cache_prices() {
        let price = Price::parse(" 0.8 , 4 ").unwrap();
        assert_eq!(price.input, 0.8);
        assert_eq!(price.output, 4.0);
        assert!(close(price.cache_read, 0.08));
        assert!(close(price.cache_write, 1.0));
        for bad in ["", "1", "a,b", "1,-2", "1,inf"] {
            let err = Price::parse(bad).unwrap_err();
            assert!(err.contains("LORE_WORKER_PRICE"), "{err}");
        }
    }
}
