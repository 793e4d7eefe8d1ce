//! [`CardLibrary`]: the gateway's live view of the card vault.
//!
//! A background thread loads the vault at start and reloads it every couple of seconds; a reload
//! re-parses only files whose content hash changed. The engine's jieba dictionary and tokenizer
//! are built on that thread when the vault first has cards, so no request pays for them and a
//! gateway without cards does not carry them. Requests take the current [`CardBook`]
//! with one lock-free-in-practice read of an `Arc`. Until the first load finishes the book is
//! empty and requests go through untouched.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use lore_storage::Vault;
use tracing::{info, warn};

use super::book::CardBook;
use crate::injection::CardSettings;

/// The current card book and the settings of injection.
#[derive(Debug)]
pub struct CardLibrary {
    vault: Vault,
    current: RwLock<Arc<CardBook>>,
    /// True once the vault was read at least once.
    loaded: AtomicBool,
    /// How blocks are built.
    pub settings: CardSettings,
}

impl CardLibrary {
    /// A library over the vault at `vault`, empty until [`CardLibrary::reload`] runs.
    pub fn new(vault: Vault, settings: CardSettings) -> Arc<Self> {
        Arc::new(Self {
            vault,
            current: RwLock::new(Arc::new(CardBook::default())),
            loaded: AtomicBool::new(false),
            settings,
        })
    }

    /// The book requests match against.
    pub fn current(&self) -> Arc<CardBook> {
        match self.current.read() {
            Ok(book) => book.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reloads the vault; swaps the book (and logs) only on the first load and when something
    /// changed, so a vault that stays as it is, or stays missing, writes nothing to the log.
    /// Returns true on a change.
    pub fn reload(&self) -> bool {
        let previous = self.current();
        let snapshot = self.vault.load(Some(&previous.snapshot));
        if snapshot.fingerprint == previous.snapshot.fingerprint
            && self.loaded.swap(true, Ordering::Relaxed)
        {
            return false;
        }
        self.loaded.store(true, Ordering::Relaxed);
        for problem in &snapshot.problems {
            warn!(file = %problem.path.display(), problem = %problem.message, "card skipped");
        }
        let book = Arc::new(CardBook::new(snapshot));
        info!(cards = book.cards.len(), vault = %self.vault.root().display(), "card book loaded");
        match self.current.write() {
            Ok(mut current) => *current = book,
            Err(poisoned) => *poisoned.into_inner() = book,
        }
        true
    }

    /// Starts the background thread that warms the engine and keeps the book current.
    pub fn watch(self: &Arc<Self>, every: Duration) {
        let library = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("card-library".into())
            .spawn(move || {
                // The engine's dictionary and tokenizer cost tens of megabytes: build them only
                // once the vault has cards, so a gateway without cards stays small.
                let mut warmed = false;
                loop {
                    if !warmed && !library.vault.card_files().is_empty() {
                        super::warm_up();
                        warmed = true;
                    }
                    library.reload();
                    std::thread::sleep(every);
                }
            });
        if let Err(err) = spawned {
            warn!(error = %err, "could not start the card library thread; cards are off");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_missing_or_unchanged_vault_is_loaded_once_and_then_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let missing = CardLibrary::new(
            Vault::new(dir.path().join("no-such-vault")),
            CardSettings::default(),
        );
        assert!(missing.reload(), "the first load always counts");
        for _ in 0..3 {
            assert!(
                !missing.reload(),
                "a vault that stays missing is not reloaded"
            );
        }
        let vault = dir.path().join("cards");
        std::fs::create_dir_all(vault.join("people")).unwrap();
        let library = CardLibrary::new(Vault::new(&vault), CardSettings::default());
        assert!(library.reload());
        assert!(
            !library.reload(),
            "an empty vault that stays empty is left alone"
        );
        std::fs::write(
            vault.join("people/mira.md"),
            "---\ntitle: Mira\nkeywords: [Mira]\n---\n## who\nRuns payments.\n",
        )
        .unwrap();
        assert!(library.reload(), "a new card is picked up");
        assert_eq!(library.current().cards.len(), 1);
        assert!(!library.reload());
    }
}
