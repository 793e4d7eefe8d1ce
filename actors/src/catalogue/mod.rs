//! The model catalogue: context window, output limit and list prices of every model Lore knows,
//! compiled into the binary from `models.json`, with `LORE_MODEL_OVERRIDES` on top.
//!
//! Pure and shared: the gradient context manager reads windows and cache prices from it, the
//! worker client and the cost accounting read prices. A model matches the entry with the
//! longest prefix of its normalised name ([`normalise`]); an override beats the catalogue; a
//! model nobody knows gets the reference's unknown-model default (200K window, 8,192 output,
//! $3 / $15 / $0.30 / $3.75). A `:free` model costs nothing.
//!
//! - [`price`]: [`Price`] and the cost of a usage.
//! - [`overrides`]: the `LORE_MODEL_OVERRIDES` reader.

pub mod overrides;
pub mod price;

use std::sync::{Arc, OnceLock};

use serde::Deserialize;

pub use overrides::{Override, parse_overrides};
pub use price::{Price, cost};

/// The catalogue file, compiled in.
const MODELS_JSON: &str = include_str!("models.json");

/// Where a model's figures came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The compiled-in catalogue.
    Catalogue,
    /// `LORE_MODEL_OVERRIDES` (possibly on top of a catalogue entry).
    Override,
    /// No entry matched: the unknown-model default.
    Unknown,
}

impl Source {
    /// Lowercase name for tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Catalogue => "catalogue",
            Source::Override => "override",
            Source::Unknown => "default",
        }
    }
}

/// Everything Lore knows about one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The prefix that matched (`"unknown"` for the default).
    pub matched: String,
    /// Provider id, when the entry names one.
    pub provider: Option<String>,
    /// Context window in tokens (input + output).
    pub context: u64,
    /// Context window with Anthropic's 1M-context beta, for models that offer it.
    pub context_1m: Option<u64>,
    /// Largest output in tokens.
    pub output: u64,
    /// List prices.
    pub price: Price,
    /// Fill fraction of the window past which answer quality degrades (reference §9.4).
    pub quality_knee: f64,
    /// Where the figures came from.
    pub source: Source,
}

impl ModelInfo {
    /// The window for a request, given whether it asked for the 1M-context beta.
    pub fn window(&self, long_context: bool) -> u64 {
        match (long_context, self.context_1m) {
            (true, Some(big)) => big,
            _ => self.context,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CostJson {
    input: f64,
    output: f64,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
    cache_write_1h: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryJson {
    prefix: String,
    provider: Option<String>,
    context: u64,
    context_1m: Option<u64>,
    output: u64,
    cost: CostJson,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct UnknownJson {
    context: u64,
    output: u64,
    cost: CostJson,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileJson {
    #[allow(dead_code)]
    about: String,
    unknown: UnknownJson,
    models: Vec<EntryJson>,
    quality_knees: Vec<(String, f64)>,
    default_quality_knee: f64,
}

fn price_of(cost: &CostJson) -> Price {
    Price::from_parts(
        cost.input,
        cost.output,
        cost.cache_read,
        cost.cache_write,
        cost.cache_write_1h,
    )
}

/// One row of the catalogue.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    prefix: String,
    provider: Option<String>,
    context: u64,
    context_1m: Option<u64>,
    output: u64,
    price: Price,
}

/// The catalogue with the overrides in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    entries: Vec<Entry>,
    unknown: Entry,
    knees: Vec<(String, f64)>,
    default_knee: f64,
    overrides: Vec<Override>,
}

fn parse_builtin() -> Catalogue {
    // The file is ours and tested (`the_compiled_in_file_parses`); should it ever fail, the
    // gateway still runs with the unknown-model default for everything.
    let file: Option<FileJson> = serde_json::from_str(MODELS_JSON).ok();
    let unknown_default = Entry {
        prefix: "unknown".into(),
        provider: None,
        context: 200_000,
        context_1m: None,
        output: 8_192,
        price: Price::from_parts(3.0, 15.0, Some(0.3), Some(3.75), None),
    };
    let Some(file) = file else {
        return Catalogue {
            entries: Vec::new(),
            unknown: unknown_default,
            knees: Vec::new(),
            default_knee: 0.4,
            overrides: Vec::new(),
        };
    };
    Catalogue {
        entries: file
            .models
            .iter()
            .map(|entry| Entry {
                prefix: normalise(&entry.prefix),
                provider: entry.provider.clone(),
                context: entry.context,
                context_1m: entry.context_1m,
                output: entry.output,
                price: price_of(&entry.cost),
            })
            .collect(),
        unknown: Entry {
            context: file.unknown.context,
            output: file.unknown.output,
            price: price_of(&file.unknown.cost),
            ..unknown_default
        },
        knees: file
            .quality_knees
            .into_iter()
            .map(|(prefix, knee)| (normalise(&prefix), knee))
            .collect(),
        default_knee: file.default_quality_knee,
        overrides: Vec::new(),
    }
}

impl Catalogue {
    /// The compiled-in catalogue, without overrides (parsed once per process).
    pub fn builtin() -> Arc<Catalogue> {
        static BUILTIN: OnceLock<Arc<Catalogue>> = OnceLock::new();
        BUILTIN.get_or_init(|| Arc::new(parse_builtin())).clone()
    }

    /// The compiled-in catalogue with `overrides` on top.
    pub fn with_overrides(overrides: Vec<Override>) -> Catalogue {
        let mut catalogue = (*Self::builtin()).clone();
        catalogue.overrides = overrides
            .into_iter()
            .map(|mut o| {
                o.prefix = normalise(&o.prefix);
                o
            })
            .collect();
        catalogue
    }

    fn entry_for(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .filter(|entry| name.starts_with(&entry.prefix))
            .max_by_key(|entry| entry.prefix.len())
    }

    fn override_for(&self, name: &str) -> Option<&Override> {
        self.overrides
            .iter()
            .filter(|o| name.starts_with(&o.prefix))
            .max_by_key(|o| o.prefix.len())
    }

    /// The quality knee of a model family.
    fn knee_for(&self, name: &str) -> f64 {
        self.knees
            .iter()
            .filter(|(prefix, _)| name.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map_or(self.default_knee, |(_, knee)| *knee)
    }

    /// What Lore knows about `model` (any spelling: `anthropic/claude-3.5-haiku`, a dated id).
    pub fn lookup(&self, model: &str) -> ModelInfo {
        let name = normalise(model);
        let free = model.trim().to_ascii_lowercase().ends_with(":free");
        let entry = self.entry_for(&name);
        let (base, source) = match entry {
            Some(entry) => (entry, Source::Catalogue),
            None => (&self.unknown, Source::Unknown),
        };
        let mut info = ModelInfo {
            matched: base.prefix.clone(),
            provider: base.provider.clone(),
            context: base.context,
            context_1m: base.context_1m,
            output: base.output,
            price: base.price,
            quality_knee: self.knee_for(&name),
            source,
        };
        if let Some(found) = self.override_for(&name) {
            found.apply(&mut info);
            info.matched = found.prefix.clone();
            info.source = Source::Override;
        }
        if free {
            info.price = Price::FREE;
        }
        info
    }

    /// Every entry with the overrides applied, then the overrides that are not an entry's own
    /// prefix (a new model, or a narrower one such as `claude-sonnet-4-5` under
    /// `claude-sonnet-4`, which would otherwise not show), then the unknown-model default: the
    /// effective table `lore models` prints.
    pub fn table(&self) -> Vec<ModelInfo> {
        let mut rows: Vec<ModelInfo> = self
            .entries
            .iter()
            .map(|entry| ModelInfo {
                matched: entry.prefix.clone(),
                ..self.lookup(&entry.prefix)
            })
            .collect();
        for o in &self.overrides {
            let own_entry = self.entries.iter().any(|entry| entry.prefix == o.prefix);
            if !o.prefix.is_empty() && !own_entry {
                rows.push(self.lookup(&o.prefix));
            }
        }
        let mut unknown = ModelInfo {
            matched: "(any other model)".into(),
            provider: None,
            context: self.unknown.context,
            context_1m: None,
            output: self.unknown.output,
            price: self.unknown.price,
            quality_knee: self.default_knee,
            source: Source::Unknown,
        };
        if let Some(found) = self.overrides.iter().find(|o| o.prefix.is_empty()) {
            found.apply(&mut unknown);
            unknown.source = Source::Override;
        }
        rows.push(unknown);
        rows
    }
}

/// The model name without a `provider/` prefix, a `:variant` suffix or a date suffix,
/// lowercased, with dots read as dashes (`anthropic/claude-3.5-haiku` → `claude-3-5-haiku`).
pub fn normalise(model: &str) -> String {
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

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
