//! The card vault: a folder of Markdown cards the user owns, read and written as plain files.
//!
//! Layout: `<root>/<kind dir>/<key>.md` (`people/`, `events/`, `places/`, `things/`, `slang/`,
//! renamed by `kinds.yaml`), free-form `entry` cards at the root or under unknown folders. A file
//! whose parent path has a component starting with `.` or `_` is invisible (`_archive/`, `.lore/`).
//!
//! Loading never fails because of one card: an unreadable, non-UTF-8, oversized or unparsable
//! file becomes a [`VaultProblem`] and every other card still loads. Reloading reuses the parsed
//! card when the file's content hash is unchanged, so an edit that keeps the size and the mtime
//! is still seen. Writes are atomic (temporary file in the same folder, fsync, rename) and refuse
//! keys that could escape the vault.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use lore_proto::cards::{Card, Kind, KindsConfig, parse_card, safe_key};
use sha2::{Digest, Sha256};

use crate::error::{StorageError, StorageErrorKind};

/// Name of the vault's configuration file.
pub const CONFIG_FILE: &str = "kinds.yaml";
/// Largest card file read; a larger one is reported, not loaded.
pub const MAX_CARD_BYTES: u64 = 4 * 1024 * 1024;

/// One card as found on disk.
#[derive(Debug, Clone)]
pub struct VaultCard {
    /// The parsed card.
    pub card: Card,
    /// Where it lives.
    pub path: PathBuf,
    /// SHA-256 of the file content, first 16 bytes.
    pub hash: [u8; 16],
    /// Modification time, for optimistic concurrency of writers.
    pub modified: Option<SystemTime>,
}

/// A file that could not be loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultProblem {
    /// The file.
    pub path: PathBuf,
    /// What is wrong and what to do.
    pub message: String,
}

/// Everything loaded from a vault at one moment.
#[derive(Debug, Clone, Default)]
pub struct VaultSnapshot {
    /// The parsed `kinds.yaml` (defaults when absent).
    pub config: KindsConfig,
    /// Warnings from `kinds.yaml`.
    pub config_warnings: Vec<String>,
    /// Cards, sorted by path.
    pub cards: Vec<VaultCard>,
    /// Files that could not be loaded.
    pub problems: Vec<VaultProblem>,
    /// Hash of `kinds.yaml` plus every file's hash: equal fingerprints mean nothing changed.
    pub fingerprint: [u8; 16],
}

impl VaultSnapshot {
    /// The card with this key, if loaded.
    pub fn get(&self, key: &str) -> Option<&VaultCard> {
        self.cards.iter().find(|entry| entry.card.key == key)
    }
}

/// A vault folder.
#[derive(Debug, Clone)]
pub struct Vault {
    root: PathBuf,
}

fn io_error(what: String, err: std::io::Error) -> StorageError {
    let kind = if err.kind() == std::io::ErrorKind::StorageFull {
        StorageErrorKind::Full
    } else {
        StorageErrorKind::Io
    };
    StorageError::new(kind, format!("{what}: {err}"))
}

fn hash16(bytes: &[u8]) -> [u8; 16] {
    let digest = Sha256::digest(bytes);
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

impl Vault {
    /// A vault rooted at `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The vault folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads `kinds.yaml`, defaults when missing.
    pub fn config(&self) -> (KindsConfig, Vec<String>, [u8; 16]) {
        match std::fs::read(self.root.join(CONFIG_FILE)) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let (config, warnings) = KindsConfig::parse(&text);
                (config, warnings, hash16(&bytes))
            }
            Err(_) => (KindsConfig::default(), Vec::new(), [0; 16]),
        }
    }

    /// Every visible card file under the root, sorted by path.
    pub fn card_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        walk(&self.root, &mut files);
        files.sort();
        files
    }

    /// The kind of a card file, from its first path component under the root.
    pub fn kind_of(&self, path: &Path, config: &KindsConfig) -> Kind {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let mut components = relative.components();
        match (components.next(), components.next()) {
            (Some(first), Some(_)) => config.kind_for_dir(&first.as_os_str().to_string_lossy()),
            _ => Kind::Entry,
        }
    }

    /// Loads the vault. `previous` lets unchanged files reuse their parsed card.
    pub fn load(&self, previous: Option<&VaultSnapshot>) -> VaultSnapshot {
        let (config, config_warnings, config_hash) = self.config();
        let reusable: HashMap<&Path, &VaultCard> = previous
            .filter(|snapshot| snapshot.config == config)
            .map(|snapshot| {
                snapshot
                    .cards
                    .iter()
                    .map(|entry| (entry.path.as_path(), entry))
                    .collect()
            })
            .unwrap_or_default();
        let mut fingerprint = Sha256::new();
        fingerprint.update(config_hash);
        let mut snapshot = VaultSnapshot {
            config,
            config_warnings,
            ..Default::default()
        };
        for path in self.card_files() {
            match self.load_file(&path, &snapshot.config, &reusable) {
                Ok(entry) => {
                    fingerprint.update(entry.hash);
                    snapshot.cards.push(entry);
                }
                Err(message) => {
                    fingerprint.update(path.to_string_lossy().as_bytes());
                    snapshot.problems.push(VaultProblem { path, message });
                }
            }
        }
        let digest = fingerprint.finalize();
        snapshot.fingerprint.copy_from_slice(&digest[..16]);
        snapshot
    }

    fn load_file(
        &self,
        path: &Path,
        config: &KindsConfig,
        reusable: &HashMap<&Path, &VaultCard>,
    ) -> Result<VaultCard, String> {
        let metadata = std::fs::metadata(path).map_err(|err| format!("cannot read: {err}"))?;
        if metadata.len() > MAX_CARD_BYTES {
            return Err(format!(
                "{} bytes is larger than the {MAX_CARD_BYTES}-byte limit for a card; split it",
                metadata.len()
            ));
        }
        let bytes = std::fs::read(path).map_err(|err| format!("cannot read: {err}"))?;
        let hash = hash16(&bytes);
        let modified = metadata.modified().ok();
        if let Some(previous) = reusable.get(path).filter(|previous| previous.hash == hash) {
            return Ok(VaultCard {
                modified,
                ..(*previous).clone()
            });
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| "not UTF-8 text; save the file as UTF-8".to_string())?;
        let key = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = self.kind_of(path, config);
        let card = parse_card(&key, kind, &text, config).map_err(|problem| problem.to_string())?;
        Ok(VaultCard {
            card,
            path: path.to_path_buf(),
            hash,
            modified,
        })
    }

    /// Where a card of `kind` with `key` lives (the key is checked first).
    pub fn path_for(
        &self,
        key: &str,
        kind: Kind,
        config: &KindsConfig,
    ) -> Result<PathBuf, StorageError> {
        let key = safe_key(key).map_err(|err| {
            StorageError::new(
                StorageErrorKind::Io,
                format!("card key `{key}` is not allowed: {err}"),
            )
        })?;
        let folder = match config.dir_for(kind) {
            Some(dir) => self.root.join(dir),
            None => self.root.clone(),
        };
        Ok(folder.join(format!("{key}.md")))
    }

    /// Writes a card atomically. With `expected_modified`, refuses to overwrite a file that
    /// changed since the caller read it (two writers cannot silently overwrite each other).
    pub fn write_card(
        &self,
        card: &Card,
        config: &KindsConfig,
        expected_modified: Option<SystemTime>,
    ) -> Result<PathBuf, StorageError> {
        let path = self.path_for(&card.key, card.kind, config)?;
        if let Some(expected) = expected_modified {
            let current = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
            if current != Some(expected) {
                return Err(StorageError::new(
                    StorageErrorKind::Io,
                    format!(
                        "card `{}` changed on disk since it was read; read it again and reapply the change",
                        card.key
                    ),
                ));
            }
        }
        write_atomic(&path, card.render().as_bytes())?;
        Ok(path)
    }

    /// Writes raw text to `relative` under the root, atomically (used by `init` and imports).
    pub fn write_file(&self, relative: &Path, text: &str) -> Result<PathBuf, StorageError> {
        let path = self.root.join(relative);
        if !path.starts_with(&self.root)
            || relative
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(StorageError::new(
                StorageErrorKind::Io,
                format!("{} is outside the vault", relative.display()),
            ));
        }
        write_atomic(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder, fsynced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StorageError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)
        .map_err(|err| io_error(format!("cannot create {}", folder.display()), err))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = folder.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(err) = result {
        let _ = std::fs::remove_file(&temporary);
        return Err(io_error(format!("cannot write {}", path.display()), err));
    }
    Ok(())
}

fn walk(folder: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            if !name.starts_with('.') && !name.starts_with('_') {
                walk(&path, files);
            }
        } else if file_type.is_file() && name.ends_with(".md") && !name.starts_with('.') {
            files.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALICE: &str = "---\ntitle: Alice\nkeywords: [Alice, payments team]\naliases: [Al]\n---\n## who\nRuns payments.\n";

    fn vault() -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::new(dir.path());
        (dir, vault)
    }

    #[test]
    fn kinds_come_from_folders_and_hidden_folders_are_skipped() {
        let (dir, vault) = vault();
        vault
            .write_file(Path::new("people/alice.md"), ALICE)
            .unwrap();
        vault
            .write_file(
                Path::new("notes.md"),
                "---\nkeywords: [note]\n---\nfree text\n",
            )
            .unwrap();
        vault
            .write_file(Path::new("_archive/old.md"), ALICE)
            .unwrap();
        vault
            .write_file(Path::new("people/.draft.md"), ALICE)
            .unwrap();
        let snapshot = vault.load(None);
        let kinds: Vec<(String, Kind)> = snapshot
            .cards
            .iter()
            .map(|c| (c.card.key.clone(), c.card.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("notes".to_string(), Kind::Entry),
                ("alice".to_string(), Kind::People)
            ]
        );
        assert!(snapshot.problems.is_empty(), "{:?}", snapshot.problems);
        drop(dir);
    }

    #[test]
    fn a_broken_or_huge_card_does_not_stop_the_others() {
        let (dir, vault) = vault();
        vault
            .write_file(Path::new("people/alice.md"), ALICE)
            .unwrap();
        vault
            .write_file(
                Path::new("people/broken.md"),
                "---\nkeywords: [a\n---\nbody",
            )
            .unwrap();
        std::fs::write(dir.path().join("people/binary.md"), [0xff, 0xfe, 0x00]).unwrap();
        let huge = format!("---\nkeywords: [big]\n---\n{}", "line\n".repeat(1_000_000));
        vault
            .write_file(Path::new("things/huge.md"), &huge)
            .unwrap();
        let snapshot = vault.load(None);
        let keys: Vec<&str> = snapshot.cards.iter().map(|c| c.card.key.as_str()).collect();
        assert!(keys.contains(&"alice"), "{keys:?}");
        let broken: Vec<String> = snapshot
            .problems
            .iter()
            .map(|p| p.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            broken.contains(&"broken.md".to_string()) && broken.contains(&"binary.md".to_string()),
            "{:?}",
            snapshot.problems
        );
        // A million-line card (5 MB) is over the limit: reported with the reason, not loaded.
        let huge = snapshot
            .problems
            .iter()
            .find(|p| p.path.ends_with("things/huge.md"))
            .unwrap();
        assert!(huge.message.contains("larger than"), "{}", huge.message);
    }

    #[test]
    fn an_edit_with_the_same_size_and_mtime_is_seen() {
        let (dir, vault) = vault();
        let path = vault
            .write_file(Path::new("people/alice.md"), ALICE)
            .unwrap();
        let first = vault.load(None);
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, ALICE.replace("Runs", "Owns")).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(modified).unwrap();
        let second = vault.load(Some(&first));
        assert_ne!(first.fingerprint, second.fingerprint);
        assert!(second.cards[0].card.body.contains("Owns"));
        let third = vault.load(Some(&second));
        assert_eq!(second.fingerprint, third.fingerprint);
        drop(dir);
    }

    #[test]
    fn unsafe_keys_are_refused_and_writes_check_the_mtime() {
        let (_dir, vault) = vault();
        let config = KindsConfig::default();
        for key in ["../escape", "a/b", ".hidden", "nul\u{0}"] {
            assert!(
                vault.path_for(key, Kind::People, &config).is_err(),
                "{key:?}"
            );
        }
        let mut card = parse_card("alice", Kind::People, ALICE, &config).unwrap();
        let path = vault.write_card(&card, &config, None).unwrap();
        let seen = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        card.title = "Alice B".into();
        vault.write_card(&card, &config, None).unwrap();
        let stale = vault.write_card(&card, &config, Some(seen)).unwrap_err();
        assert!(stale.message.contains("changed on disk"), "{stale}");
    }
}
