//! The card book behind the tools: loads the vault (reusing unchanged cards), answers
//! `read_card` and `list_cards`, and shapes every answer as `{ok: true, …}` or
//! `{ok: false, error}`.

use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use lore_proto::cards::{Kind, safe_key};
use lore_storage::vault::{Vault, VaultCard, VaultSnapshot};
use serde_json::{Map, Value, json};

use super::args::{ListCardsArgs, ReadCardArgs};

/// A card error: the message tells the model what to fix.
pub type ToolError = String;

/// The vault the MCP tools work on.
#[derive(Debug)]
pub struct Book {
    pub(crate) vault: Vault,
    last: Mutex<Option<VaultSnapshot>>,
}

/// `{ok: true}` merged with the fields of `value`.
pub fn ok(value: Value) -> Value {
    let mut out = Map::new();
    out.insert("ok".into(), Value::Bool(true));
    if let Value::Object(fields) = value {
        out.extend(fields);
    }
    Value::Object(out)
}

/// `{ok: false, error}`.
pub fn failure(error: &str) -> Value {
    json!({"ok": false, "error": error})
}

/// A modification time as nanoseconds since the epoch, in a string (exact in any JSON reader).
pub fn mtime_string(modified: Option<SystemTime>) -> Option<String> {
    modified
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().to_string())
}

/// The names of every kind, for error messages.
pub fn kind_names() -> String {
    Kind::ALL.map(Kind::as_str).join(", ")
}

/// Parses a kind name or explains which ones exist.
pub fn parse_kind(name: &str) -> Result<Kind, ToolError> {
    Kind::parse(name).ok_or_else(|| {
        format!(
            "unknown kind `{name}`; use one of: {} (people for persons, event for things that \
             happened, place, thing, slang for in-jokes and words, entry for anything else)",
            kind_names()
        )
    })
}

impl Book {
    /// A book over the vault folder `root`.
    pub fn new(root: &Path) -> Self {
        Self {
            vault: Vault::new(root),
            last: Mutex::new(None),
        }
    }

    /// The vault as it is on disk now (unchanged files reuse their parsed card).
    pub fn snapshot(&self) -> VaultSnapshot {
        let mut last = match self.last.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let snapshot = self.vault.load(last.as_ref());
        *last = Some(snapshot.clone());
        snapshot
    }

    /// A path shown to the model: relative to the vault.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.vault.root())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// Finds a card by key, or explains why it cannot be read.
    pub fn find<'a>(
        &self,
        snapshot: &'a VaultSnapshot,
        raw: &str,
    ) -> Result<&'a VaultCard, ToolError> {
        let key = safe_key(raw).map_err(|err| err.to_string())?;
        if let Some(entry) = snapshot.get(&key) {
            return Ok(entry);
        }
        if let Some(problem) = snapshot.problems.iter().find(|p| {
            p.path
                .file_stem()
                .is_some_and(|s| s.to_string_lossy() == key)
        }) {
            return Err(format!(
                "card `{key}` exists at {} but cannot be read: {}; the user has to fix the file",
                self.relative(&problem.path),
                problem.message
            ));
        }
        let folded = key.to_lowercase();
        let similar: Vec<String> = snapshot
            .cards
            .iter()
            .map(|e| e.card.key.clone())
            .filter(|k| k.to_lowercase().contains(&folded) || folded.contains(&k.to_lowercase()))
            .take(5)
            .collect();
        let hint = if similar.is_empty() {
            "call list_cards to see the keys, or write_card with mode \"create\" to make it".into()
        } else {
            format!("did you mean {}? (keys are exact)", similar.join(", "))
        };
        Err(format!("no card with key `{key}`; {hint}"))
    }

    /// `read_card`: the card's fields and its text without private sections.
    pub fn read(&self, args: &ReadCardArgs) -> Result<Value, ToolError> {
        let snapshot = self.snapshot();
        let entry = self.find(&snapshot, &args.key)?;
        let config = &snapshot.config;
        let card = &entry.card;
        let sections: Map<String, Value> = card
            .sections
            .iter()
            .filter(|(name, _)| !config.is_private(name))
            .map(|(name, text)| (name.clone(), Value::String(text.clone())))
            .collect();
        let secondary = &card.secondary;
        Ok(ok(json!({
            "key": card.key,
            "kind": card.kind.as_str(),
            "title": card.title,
            "keywords": card.keywords,
            "aliases": card.aliases,
            "refs": card.refs,
            "secondary": {
                "all": secondary.all, "any": secondary.any,
                "not": secondary.not, "not_all": secondary.not_all,
            },
            "priority": card.priority,
            "scan_depth": card.scan_depth,
            "enabled": card.enabled,
            "inject": card.inject,
            "sections": sections,
            "body": card.effective_body(config),
            "recent_section": config.recent_section(card.kind),
            "path": self.relative(&entry.path),
            "mtime": mtime_string(entry.modified),
            "warnings": card.warnings,
        })))
    }

    /// `list_cards`: one row per card, optionally of one kind.
    pub fn list(&self, args: &ListCardsArgs) -> Result<Value, ToolError> {
        let kind = args.kind.as_deref().map(parse_kind).transpose()?;
        let snapshot = self.snapshot();
        let cards: Vec<Value> = snapshot
            .cards
            .iter()
            .filter(|e| kind.is_none_or(|k| e.card.kind == k))
            .map(|e| {
                json!({
                    "key": e.card.key,
                    "kind": e.card.kind.as_str(),
                    "title": e.card.title,
                    "keywords": e.card.keywords,
                    "inject": e.card.inject,
                    "enabled": e.card.enabled,
                })
            })
            .collect();
        Ok(ok(json!({
            "vault": self.vault.root().to_string_lossy(),
            "count": cards.len(),
            "cards": cards,
            "unreadable": snapshot.problems.iter().map(|p| self.relative(&p.path)).collect::<Vec<_>>(),
        })))
    }
}
