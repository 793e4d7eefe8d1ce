//! List prices in US dollars per million tokens, and what a usage costs at them.

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
    /// Input written to the prompt cache with the default (5-minute) lifetime.
    pub cache_write: f64,
    /// Input written to the prompt cache with a 1-hour lifetime.
    pub cache_write_1h: f64,
}

impl Price {
    /// A price from its parts; missing cache prices follow the reference (§20): cache reads
    /// 0.1 × input, 5-minute writes 1.25 × input, 1-hour writes 2 × input (or the 5-minute
    /// price when that was given and the 1-hour one was not).
    pub fn from_parts(
        input: f64,
        output: f64,
        cache_read: Option<f64>,
        cache_write: Option<f64>,
        cache_write_1h: Option<f64>,
    ) -> Self {
        let write = cache_write.unwrap_or(input * 1.25);
        Self {
            input,
            output,
            cache_read: cache_read.unwrap_or(input * 0.1),
            cache_write: write,
            cache_write_1h: cache_write_1h.unwrap_or(if cache_write.is_some() && write <= input {
                write
            } else {
                input * 2.0
            }),
        }
    }

    /// A price from input and output alone (the cache prices derived).
    pub fn from_input_output(input: f64, output: f64) -> Self {
        Self::from_parts(input, output, None, None, None)
    }

    /// Nothing to pay (`:free` models).
    pub const FREE: Price = Price {
        input: 0.0,
        output: 0.0,
        cache_read: 0.0,
        cache_write: 0.0,
        cache_write_1h: 0.0,
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

    /// Dollars per token of a cache write with the given lifetime.
    pub fn write_per_token(&self, one_hour: bool) -> f64 {
        if one_hour {
            self.cache_write_1h / 1e6
        } else {
            self.cache_write / 1e6
        }
    }

    /// Dollars per token of a cache read.
    pub fn read_per_token(&self) -> f64 {
        self.cache_read / 1e6
    }
}

/// What `usage` cost at `price`, in US dollars (cache writes at the 5-minute price).
pub fn cost(usage: &UsageTotals, price: Price) -> f64 {
    (usage.input_tokens as f64 * price.input
        + usage.output_tokens as f64 * price.output
        + usage.cache_read_tokens as f64 * price.cache_read
        + usage.cache_write_tokens as f64 * price.cache_write)
        / 1_000_000.0
}
