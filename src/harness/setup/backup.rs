//! What `lore setup` changed, so `lore setup --undo` can put it back exactly.
//!
//! Per harness, `<data dir>/setup/<harness>.json` lists each file Lore wrote: whether it existed
//! before, where the copy of its original bytes is (`<data dir>/setup/backups/<harness>/`), and
//! the hash of what Lore wrote. A second `lore setup` keeps the first backup, so undo always
//! goes back to the user's own file. Undo restores the original bytes and permissions (or
//! removes a file Lore created); if the file was edited after setup, that version is kept
//! beside it as `<file>.lore-undo-<unix seconds>` first, so nothing is lost.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One file Lore wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// The file.
    pub path: PathBuf,
    /// Whether it existed before the first setup.
    pub existed: bool,
    /// Copy of its original bytes (when it existed).
    pub backup: Option<PathBuf>,
    /// Unix permission bits of the original.
    pub mode: Option<u32>,
    /// sha256 of what Lore wrote last.
    pub written_sha256: String,
}

/// Everything `lore setup` changed for one harness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The harness.
    pub harness: String,
    /// The files, in the order they were written.
    pub files: Vec<FileRecord>,
}

/// The folder of manifests and backups.
pub fn setup_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("setup")
}

fn manifest_path(data_dir: &Path, harness: &str) -> PathBuf {
    setup_dir(data_dir).join(format!("{harness}.json"))
}

/// Hex sha256 of bytes.
pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The manifest of a harness, if it was set up.
pub fn load(data_dir: &Path, harness: &str) -> anyhow::Result<Option<Manifest>> {
    let path = manifest_path(data_dir, harness);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{} is damaged; restore the files by hand from {}",
                path.display(),
                setup_dir(data_dir).join("backups").display()
            )
        })?)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn save(data_dir: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let path = manifest_path(data_dir, &manifest.harness);
    write_atomic(&path, serde_json::to_string_pretty(manifest)?.as_bytes())
}

/// Writes a file through a temporary sibling and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let parent = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = parent.join(format!(".{name}.lore-tmp"));
    std::fs::write(&temp, bytes).with_context(|| format!("cannot write {}", temp.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).with_context(|| format!("cannot replace {}", path.display()))
}

fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).ok().map(|m| m.permissions().mode())
}

/// Writes `files` (path, new content) for `harness`, backing up each original the first time.
pub fn apply(data_dir: &Path, harness: &str, files: &[(PathBuf, String)]) -> anyhow::Result<()> {
    let mut manifest = load(data_dir, harness)?.unwrap_or(Manifest {
        harness: harness.to_string(),
        files: Vec::new(),
    });
    let backups = setup_dir(data_dir).join("backups").join(harness);
    for (path, content) in files {
        let known = manifest.files.iter().position(|f| &f.path == path);
        if known.is_none() {
            let existed = path.exists();
            let backup = if existed {
                std::fs::create_dir_all(&backups)
                    .with_context(|| format!("cannot create {}", backups.display()))?;
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "file".into());
                let copy = backups.join(format!("{}-{name}", manifest.files.len()));
                std::fs::copy(path, &copy).with_context(|| {
                    format!("cannot back up {} to {}", path.display(), copy.display())
                })?;
                Some(copy)
            } else {
                None
            };
            manifest.files.push(FileRecord {
                path: path.clone(),
                existed,
                backup,
                mode: mode_of(path),
                written_sha256: String::new(),
            });
            // The manifest names the backup before the file changes.
            save(data_dir, &manifest)?;
        }
        write_atomic(path, content.as_bytes())?;
        if let Some(record) = manifest.files.iter_mut().find(|f| &f.path == path) {
            record.written_sha256 = sha256(content.as_bytes());
        }
        save(data_dir, &manifest)?;
    }
    Ok(())
}

/// What undo did to one file, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// The original bytes are back.
    Restored(PathBuf),
    /// Lore had created the file; it is gone.
    Removed(PathBuf),
    /// The file had been edited after setup; that version was kept at the second path.
    KeptEdited(PathBuf, PathBuf),
}

/// Puts back every file `lore setup` changed for `harness`; `None` when it was not set up.
pub fn undo(data_dir: &Path, harness: &str) -> anyhow::Result<Option<Vec<Restored>>> {
    let Some(manifest) = load(data_dir, harness)? else {
        return Ok(None);
    };
    let mut done = Vec::new();
    for record in manifest.files.iter().rev() {
        if let Ok(current) = std::fs::read(&record.path)
            && sha256(&current) != record.written_sha256
        {
            let seconds = lore_storage::now_ms() / 1000;
            let kept = PathBuf::from(format!("{}.lore-undo-{seconds}", record.path.display()));
            std::fs::write(&kept, &current)
                .with_context(|| format!("cannot keep {}", kept.display()))?;
            done.push(Restored::KeptEdited(record.path.clone(), kept));
        }
        match (&record.backup, record.existed) {
            (Some(backup), true) => {
                let bytes = std::fs::read(backup).with_context(|| {
                    format!(
                        "the backup {} of {} is missing; nothing was changed for this file",
                        backup.display(),
                        record.path.display()
                    )
                })?;
                write_atomic(&record.path, &bytes)?;
                if let Some(mode) = record.mode {
                    use std::os::unix::fs::PermissionsExt;
                    let _ = std::fs::set_permissions(
                        &record.path,
                        std::fs::Permissions::from_mode(mode),
                    );
                }
                done.push(Restored::Restored(record.path.clone()));
            }
            (_, false) => {
                if record.path.exists() {
                    std::fs::remove_file(&record.path)
                        .with_context(|| format!("cannot remove {}", record.path.display()))?;
                }
                done.push(Restored::Removed(record.path.clone()));
            }
            (None, true) => bail!(
                "the setup record of {} names no backup; restore it by hand",
                record.path.display()
            ),
        }
    }
    let _ = std::fs::remove_dir_all(setup_dir(data_dir).join("backups").join(harness));
    std::fs::remove_file(manifest_path(data_dir, harness))
        .with_context(|| format!("cannot remove the setup record of {harness}"))?;
    Ok(Some(done))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn undo_restores_exact_bytes_removes_created_files_and_keeps_later_edits() {
        let data = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let existing = home.path().join("settings.json");
        let original = b"{ \"mine\" : true }   \n".to_vec();
        std::fs::write(&existing, &original).unwrap();
        let created = home.path().join("new/config.toml");
        apply(
            data.path(),
            "x",
            &[
                (existing.clone(), "{\"lore\":1}\n".into()),
                (created.clone(), "a = 1\n".into()),
            ],
        )
        .unwrap();
        // A second setup must not back up Lore's own version.
        apply(
            data.path(),
            "x",
            &[(existing.clone(), "{\"lore\":2}\n".into())],
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&existing).unwrap(),
            "{\"lore\":2}\n"
        );
        std::fs::write(&created, "a = 1\nb = 2\n").unwrap();
        let done = undo(data.path(), "x").unwrap().unwrap();
        assert_eq!(std::fs::read(&existing).unwrap(), original);
        assert!(!created.exists());
        let kept = done
            .iter()
            .find_map(|r| match r {
                Restored::KeptEdited(_, kept) => Some(kept.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(std::fs::read_to_string(kept).unwrap(), "a = 1\nb = 2\n");
        assert!(
            undo(data.path(), "x").unwrap().is_none(),
            "undo is done once"
        );
    }
}
