//! `LORE_MODEL_OVERRIDES`: corrections of the catalogue without a rebuild.
//!
//! A JSON object from model name (matched as a prefix, like the catalogue) to the figures that
//! change: `context` and `output` (token limits), `context_1m`, and `cost` with any of `input`,
//! `output`, `cache_read`, `cache_write`, `cache_write_1h` (US dollars per million tokens), e.g.
//! `{"claude-sonnet-4-6":{"context":64000,"output":8192}}` or
//! `{"my-model":{"context":32000,"output":4096,"cost":{"input":0.5,"output":1.5}}}`.
//! What an entry leaves out comes from the catalogue entry it matches (or the unknown-model
//! default). Anything malformed is refused whole, with a message naming the entry.

use serde_json::{Map, Value};

use super::ModelInfo;
use crate::error::ActorError;

/// One model's corrections.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Override {
    /// The model name (normalised) this applies to, as a prefix.
    pub prefix: String,
    /// Context window in tokens.
    pub context: Option<u64>,
    /// Window with the 1M-context beta.
    pub context_1m: Option<u64>,
    /// Largest output in tokens.
    pub output: Option<u64>,
    /// Input price.
    pub input: Option<f64>,
    /// Output price.
    pub output_price: Option<f64>,
    /// Cache read price.
    pub cache_read: Option<f64>,
    /// 5-minute cache write price.
    pub cache_write: Option<f64>,
    /// 1-hour cache write price.
    pub cache_write_1h: Option<f64>,
}

impl Override {
    /// Writes the corrections over `info`.
    pub fn apply(&self, info: &mut ModelInfo) {
        if let Some(context) = self.context {
            info.context = context;
            // A smaller window than the catalogue's also bounds the long-context one.
            info.context_1m = info.context_1m.map(|big| big.max(context));
        }
        if let Some(big) = self.context_1m {
            info.context_1m = Some(big);
        }
        if let Some(output) = self.output {
            info.output = output;
        }
        let price = &mut info.price;
        if let Some(input) = self.input {
            price.input = input;
        }
        if let Some(output) = self.output_price {
            price.output = output;
        }
        if let Some(read) = self.cache_read {
            price.cache_read = read;
        }
        if let Some(write) = self.cache_write {
            price.cache_write = write;
        }
        if let Some(write) = self.cache_write_1h {
            price.cache_write_1h = write;
        }
    }
}

const ACCEPTED: &str =
    "context, output, context_1m, cost {input, output, cache_read, cache_write, cache_write_1h}";

fn bad(entry: &str, why: String) -> ActorError {
    ActorError::Invalid(format!(
        "LORE_MODEL_OVERRIDES: entry {entry:?}: {why} (accepted keys: {ACCEPTED}; example: {{\"claude-sonnet-4-6\":{{\"context\":64000,\"output\":8192}}}})"
    ))
}

fn tokens(entry: &str, key: &str, value: &Value) -> Result<u64, ActorError> {
    match value.as_u64() {
        Some(n) if n > 0 => Ok(n),
        _ => Err(bad(
            entry,
            format!("{key} must be a whole number of tokens above zero, got {value}"),
        )),
    }
}

fn dollars(entry: &str, key: &str, value: &Value) -> Result<f64, ActorError> {
    match value.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(n),
        _ => Err(bad(
            entry,
            format!(
                "cost.{key} must be a price of zero or more (dollars per million tokens), got {value}"
            ),
        )),
    }
}

fn read_cost(entry: &str, cost: &Map<String, Value>, out: &mut Override) -> Result<(), ActorError> {
    for (key, value) in cost {
        let slot = match key.as_str() {
            "input" => &mut out.input,
            "output" => &mut out.output_price,
            "cache_read" => &mut out.cache_read,
            "cache_write" => &mut out.cache_write,
            "cache_write_1h" => &mut out.cache_write_1h,
            other => return Err(bad(entry, format!("unknown key cost.{other:?}"))),
        };
        *slot = Some(dollars(entry, key, value)?);
    }
    Ok(())
}

fn read_entry(entry: &str, fields: &Map<String, Value>) -> Result<Override, ActorError> {
    if entry.trim().is_empty() {
        return Err(bad(entry, "the model name is empty".into()));
    }
    let mut out = Override {
        prefix: entry.trim().to_string(),
        ..Override::default()
    };
    for (key, value) in fields {
        match key.as_str() {
            "context" => out.context = Some(tokens(entry, key, value)?),
            "context_1m" => out.context_1m = Some(tokens(entry, key, value)?),
            "output" => out.output = Some(tokens(entry, key, value)?),
            "cost" => match value {
                Value::Object(cost) => read_cost(entry, cost, &mut out)?,
                other => return Err(bad(entry, format!("cost must be an object, got {other}"))),
            },
            other => return Err(bad(entry, format!("unknown key {other:?}"))),
        }
    }
    if let (Some(context), Some(output)) = (out.context, out.output)
        && output >= context
    {
        return Err(bad(
            entry,
            format!("output ({output}) must be smaller than context ({context})"),
        ));
    }
    Ok(out)
}

/// Reads `LORE_MODEL_OVERRIDES`; empty text means no overrides.
pub fn parse_overrides(text: &str) -> Result<Vec<Override>, ActorError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(text).map_err(|err| {
        ActorError::Invalid(format!(
            "LORE_MODEL_OVERRIDES is not valid JSON ({err}); it must be an object such as {{\"claude-sonnet-4-6\":{{\"context\":64000,\"output\":8192}}}}"
        ))
    })?;
    let Value::Object(entries) = value else {
        return Err(ActorError::Invalid(format!(
            "LORE_MODEL_OVERRIDES must be a JSON object from model name to its figures, got {value}"
        )));
    };
    let mut out = Vec::with_capacity(entries.len());
    for (entry, fields) in &entries {
        match fields {
            Value::Object(fields) => out.push(read_entry(entry, fields)?),
            other => {
                return Err(bad(
                    entry,
                    format!("the value must be an object, got {other}"),
                ));
            }
        }
    }
    Ok(out)
}
