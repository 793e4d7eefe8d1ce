//! [`CardLibrary`]: the gateway's live view of the card vault.
//!
//! A background thread loads the vault at start and reloads it every couple of seconds; a reload
//! re-parses only files whose content hash changed. The engine's jieba dictionary and tokenizer
//! are built on that thread when the vault first has cards, so no request pays for them and a
//! gateway without cards does not carry them. Requests take the current [`CardBook`]
//! with one lock-free-in-practice read of an `Arc`. Until the first load finishes the book is
//! empty and requests go through untouched.

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
    /// How blocks are built.
    pub settings: CardSettings,
}

impl CardLibrary {
    /// A library over the vault at `vault`, empty until [`CardLibrary::reload`] runs.
    pub fn new(vault: Vault, settings: CardSettings) -> Arc<Self> {
        Arc::new(Self {
            vault,
            current: RwLock::new(Arc::new(CardBook::default())),
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

    /// Reloads the vault; swaps the book only when something changed. Returns true on a change.
    pub fn reload(&self) -> bool {
        let previous = self.current();
        let snapshot = self.vault.load(Some(&previous.snapshot));
        if snapshot.fingerprint == previous.snapshot.fingerprint
            && !previous.snapshot.cards.is_empty()
        {
            return false;
        }
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
