//! Reading what users already have: the local transcripts of Claude Code, Codex and OpenCode,
//! as [`ImportSession`]s that `lore import` sends to the gateway (or writes to the store when no
//! gateway runs). One parser per harness, each on the format that harness really writes:
//!
//! - [`claude_code`]: `~/.claude/projects/<slug>/<session>.jsonl` (`$CLAUDE_CONFIG_DIR`).
//! - [`codex`]: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (`$CODEX_HOME`).
//! - [`opencode`]: `~/.local/share/opencode/storage/` (`$XDG_DATA_HOME`), the JSON tree of
//!   OpenCode before 1.x; [`opencode_db`]: `~/.local/share/opencode/opencode.db`, its SQLite
//!   database since.
//!
//! Each session is attributed to the working directory its transcript records.

pub mod claude_code;
pub mod codex;
pub mod opencode;
pub mod opencode_db;
pub mod time;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lore_storage::ImportSession;

/// A harness whose transcripts can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Claude Code.
    ClaudeCode,
    /// Codex.
    Codex,
    /// OpenCode.
    OpenCode,
}

impl Source {
    /// The source a name means: `claude-code` (or `claude`), `codex`, `opencode`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "claude-code" | "claude" | "claudecode" => Some(Self::ClaudeCode),
            "codex" => Some(Self::Codex),
            "opencode" => Some(Self::OpenCode),
            _ => None,
        }
    }

    /// Where the harness keeps its transcripts by default.
    pub fn default_path(self, env: &HashMap<String, String>, home: &Path) -> PathBuf {
        let var = |name: &str| {
            env.get(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        match self {
            Self::ClaudeCode => var("CLAUDE_CONFIG_DIR")
                .unwrap_or_else(|| home.join(".claude"))
                .join("projects"),
            Self::Codex => var("CODEX_HOME")
                .unwrap_or_else(|| home.join(".codex"))
                .join("sessions"),
            Self::OpenCode => var("XDG_DATA_HOME")
                .unwrap_or_else(|| home.join(".local/share"))
                .join("opencode"),
        }
    }
}

fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

/// One thing to import: a transcript file, or one session of OpenCode's database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// A transcript file (for OpenCode's storage tree, a session record).
    File(PathBuf),
    /// A session of an OpenCode database.
    OpenCodeDb {
        /// The database.
        db: PathBuf,
        /// The session id.
        session: String,
    },
}

impl Unit {
    /// How the unit is named in messages.
    pub fn label(&self) -> String {
        match self {
            Unit::File(path) => path.display().to_string(),
            Unit::OpenCodeDb { db, session } => format!("{}#{session}", db.display()),
        }
    }
}

/// The OpenCode storage folder under `path`: `path` itself, or its `storage/`.
pub fn opencode_storage(path: &Path) -> PathBuf {
    if path.join("session").is_dir() {
        path.to_path_buf()
    } else {
        path.join("storage")
    }
}

/// The OpenCode database at or under `path`.
fn opencode_db(path: &Path) -> Option<PathBuf> {
    if path.is_file() && path.extension().is_some_and(|ext| ext == "db") {
        return Some(path.to_path_buf());
    }
    let db = path.join("opencode.db");
    db.is_file().then_some(db)
}

/// What there is to import under `path` (a file is taken as it is), in order; an unreadable
/// database is an error.
pub fn find(source: Source, path: &Path) -> Result<Vec<Unit>, String> {
    let mut out = Vec::new();
    match source {
        Source::OpenCode => {
            if let Some(db) = opencode_db(path) {
                for session in opencode_db::session_ids(&db)? {
                    out.push(Unit::OpenCodeDb {
                        db: db.clone(),
                        session,
                    });
                }
                if path.is_file() {
                    return Ok(out);
                }
            }
            if path.is_file() {
                return Ok(vec![Unit::File(path.to_path_buf())]);
            }
            out.extend(
                opencode::session_files(&opencode_storage(path))
                    .into_iter()
                    .map(Unit::File),
            );
        }
        _ if path.is_file() => out.push(Unit::File(path.to_path_buf())),
        Source::ClaudeCode => {
            let mut files = Vec::new();
            walk(
                path,
                &|p| p.extension().is_some_and(|ext| ext == "jsonl"),
                &mut files,
            );
            files.sort();
            out.extend(files.into_iter().map(Unit::File));
        }
        Source::Codex => {
            let mut files = Vec::new();
            walk(
                path,
                &|p| {
                    p.extension().is_some_and(|ext| ext == "jsonl")
                        && p.file_name()
                            .is_some_and(|name| name.to_string_lossy().starts_with("rollout-"))
                },
                &mut files,
            );
            files.sort();
            out.extend(files.into_iter().map(Unit::File));
        }
    }
    Ok(out)
}

/// Reads one unit (for OpenCode's storage tree, one session record under `root`).
pub fn read(source: Source, unit: &Unit, root: &Path) -> Result<Option<ImportSession>, String> {
    let file = match unit {
        Unit::OpenCodeDb { db, session } => return opencode_db::read_session(db, session),
        Unit::File(file) => file,
    };
    let stem = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    match source {
        Source::ClaudeCode | Source::Codex => {
            let text = std::fs::read_to_string(file)
                .map_err(|err| format!("cannot read {}: {err}", file.display()))?;
            match source {
                Source::ClaudeCode => claude_code::parse(&text, &stem),
                _ => codex::parse(&text, &stem),
            }
        }
        Source::OpenCode => {
            let storage = if root.is_file() {
                file.parent()
                    .and_then(Path::parent)
                    .and_then(Path::parent)
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
            } else {
                opencode_storage(root)
            };
            opencode::read_session(&storage, file)
        }
    }
}
