//! OpenCode ≥ 1.x sessions from its SQLite database (`~/.local/share/opencode/opencode.db`),
//! opened read-only. Tables `session` (`id`, `parent_id`, `directory`, `time_created`),
//! `message` (`id`, `session_id`, `data`: the same JSON as a storage `message/` file, without
//! its id) and `part` (`id`, `message_id`, `session_id`, `data`). Sub-sessions (a `parent_id`:
//! a sub-agent's task) are not the user's conversation and are skipped, as Claude Code's side
//! chains are.

use std::collections::HashMap;
use std::path::Path;

use lore_storage::ImportSession;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use super::opencode::build;

fn open(db: &Path) -> Result<Connection, String> {
    Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|err| format!("cannot open {} read-only: {err}", db.display()))
}

fn with_id(data: &str, id: String) -> Value {
    let mut value = serde_json::from_str::<Value>(data).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut value {
        map.insert("id".into(), Value::String(id));
    }
    value
}

/// The top-level sessions of the database, oldest first.
pub fn session_ids(db: &Path) -> Result<Vec<String>, String> {
    let conn = open(db)?;
    let mut statement = conn
        .prepare("SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created, id")
        .map_err(|err| format!("{} is not an OpenCode database: {err}", db.display()))?;
    let rows = statement
        .query_map([], |row| row.get::<_, String>(0))
        .map_err(|err| err.to_string())?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(|err| err.to_string())
}

/// Reads one session with its messages and parts.
pub fn read_session(db: &Path, session: &str) -> Result<Option<ImportSession>, String> {
    let conn = open(db)?;
    let info = conn
        .query_row(
            "SELECT id, directory, time_created FROM session WHERE id = ?1",
            [session],
            |row| {
                Ok(json!({
                    "id": row.get::<_, String>(0)?,
                    "directory": row.get::<_, String>(1)?,
                    "time": {"created": row.get::<_, i64>(2)?},
                }))
            },
        )
        .map_err(|err| format!("session {session}: {err}"))?;
    let mut parts: HashMap<String, Vec<Value>> = HashMap::new();
    let mut statement = conn
        .prepare("SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY id")
        .map_err(|err| err.to_string())?;
    let rows = statement
        .query_map([session], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .map_err(|err| err.to_string())?;
    for row in rows {
        let (id, message, data) = row.map_err(|err| err.to_string())?;
        parts.entry(message).or_default().push(with_id(&data, id));
    }
    let mut statement = conn
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY id")
        .map_err(|err| err.to_string())?;
    let rows = statement
        .query_map([session], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(|err| err.to_string())?;
    let mut messages = Vec::new();
    for row in rows {
        let (id, data) = row.map_err(|err| err.to_string())?;
        let own = parts.remove(&id).unwrap_or_default();
        messages.push((with_id(&data, id), own));
    }
    Ok(build(&info, messages))
}
