//! What the model tests share: the installed model's configuration.

use lore_actors::embedder::EmbedderConfig;

/// The configuration of this machine; panics with the fix when the model is not installed.
pub fn installed() -> EmbedderConfig {
    let config = EmbedderConfig::from_env();
    for file in [
        config.runtime.clone(),
        config.model_file(),
        config.tokenizer_file(),
    ] {
        assert!(
            file.is_file(),
            "{} is missing: run scripts/setup (or set LORE_MODELS_DIR / ORT_DYLIB_PATH) before the tests",
            file.display()
        );
    }
    config
}
