//! The model catalogue in force as rows: model prefix, window (and the 1M-context beta
//! window), output limit, list prices, quality knee, and whether the entry came from the
//! compiled-in catalogue, `LORE_MODEL_OVERRIDES` or the unknown-model default. The same shape
//! `lore models --json` prints (it uses these rows).

use lore_actors::catalogue::{Catalogue, Source};
use serde::Serialize;

/// One entry of the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatalogueRow {
    /// The prefix a model name matches (normalised), or `(any other model)`.
    pub model: String,
    /// Provider, when the entry names one.
    pub provider: Option<String>,
    /// Context window, tokens.
    pub context: u64,
    /// Window with Anthropic's 1M-context beta, for models that offer it.
    pub context_1m: Option<u64>,
    /// Largest output, tokens.
    pub output: u64,
    /// US dollars per million uncached input tokens.
    pub input_per_mtok: f64,
    /// Per million output tokens.
    pub output_per_mtok: f64,
    /// Per million tokens read from the prompt cache.
    pub cache_read_per_mtok: f64,
    /// Per million tokens written to the cache for 5 minutes.
    pub cache_write_per_mtok: f64,
    /// Per million tokens written to the cache for 1 hour.
    pub cache_write_1h_per_mtok: f64,
    /// Fill fraction of the window past which answers degrade.
    pub quality_knee: f64,
    /// `catalogue`, `override` or `default`.
    pub source: &'static str,
    /// True when `LORE_MODEL_OVERRIDES` set or changed it.
    pub overridden: bool,
}

/// The rows of `catalogue`, in the order `lore models` prints them.
pub fn rows(catalogue: &Catalogue) -> Vec<CatalogueRow> {
    catalogue
        .table()
        .into_iter()
        .map(|row| CatalogueRow {
            model: row.matched,
            provider: row.provider,
            context: row.context,
            context_1m: row.context_1m,
            output: row.output,
            input_per_mtok: row.price.input,
            output_per_mtok: row.price.output,
            cache_read_per_mtok: row.price.cache_read,
            cache_write_per_mtok: row.price.cache_write,
            cache_write_1h_per_mtok: row.price.cache_write_1h,
            quality_knee: row.quality_knee,
            source: row.source.as_str(),
            overridden: row.source == Source::Override,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lore_actors::catalogue::parse_overrides;

    #[test]
    fn an_override_is_marked_and_a_new_model_is_added() {
        let overrides = parse_overrides(
            r#"{"claude-sonnet-4-5":{"context":64000,"output":8192},"my-local-model":{"context":32000,"output":4096,"cost":{"input":0.5,"output":1.5}}}"#,
        )
        .unwrap();
        let rows = rows(&Catalogue::with_overrides(overrides));
        let sonnet = rows
            .iter()
            .find(|r| r.model == "claude-sonnet-4-5")
            .unwrap();
        assert_eq!((sonnet.context, sonnet.output), (64_000, 8_192));
        assert!(sonnet.overridden && sonnet.source == "override");
        let local = rows.iter().find(|r| r.model == "my-local-model").unwrap();
        assert_eq!((local.context, local.input_per_mtok), (32_000, 0.5));
        assert!(local.overridden);
        let opus = rows.iter().find(|r| r.model == "claude-opus-4-5").unwrap();
        assert_eq!(
            (opus.source, opus.overridden, opus.context_1m),
            ("catalogue", false, Some(1_000_000))
        );
        assert_eq!(rows.last().unwrap().source, "default");
    }
}
