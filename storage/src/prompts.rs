//! What the model was told besides the conversation: the system prompt (with the developer and
//! system messages the protocol folds into it) and the tool definitions of each turn, stored once
//! per distinct version.
//!
//! Trees and key layouts:
//! - `prompts`: `<hash>` → [`PromptVersion`], written once for each distinct version;
//! - `prompt_uses`: `<session id>/<from seq BE>` → [`PromptUse`], one row each time a session's
//!   turn is sent with another version than its previous turn: the version holds from that
//!   `seq` of the session's log on, until the next row.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::StorageError;
use crate::records::{RECORD_VERSION, decode, encode};
use crate::store::Store;

const VERSIONS: &str = "prompts";
const USES: &str = "prompt_uses";

/// One distinct version of the system prompt and tool definitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptVersion {
    /// Schema version of this record.
    pub version: u16,
    /// Hex SHA-256 (first 16 bytes) of the system text and the tool definitions.
    pub hash: String,
    /// The system prompt, developer and system messages included, as the parser joined them.
    pub system: Option<String>,
    /// The tool definitions as the request sent them (JSON text).
    pub tools: Option<String>,
    /// Number of tool definitions.
    pub tool_count: u32,
    /// When it was first seen.
    pub first_seen_ms: u64,
}

impl PromptVersion {
    /// A version of `system` and `tools`, with its hash.
    pub fn new(
        system: Option<String>,
        tools: Option<String>,
        tool_count: u32,
        now_ms: u64,
    ) -> Self {
        Self {
            version: RECORD_VERSION,
            hash: prompt_hash(system.as_deref(), tools.as_deref()),
            system,
            tools,
            tool_count,
            first_seen_ms: now_ms,
        }
    }
}

/// The hash a version is stored under.
pub fn prompt_hash(system: Option<&str>, tools: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(system.unwrap_or("").as_bytes());
    hasher.update([0]);
    hasher.update(tools.unwrap_or("").as_bytes());
    hasher.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// From which point of a session's log a version was used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptUse {
    /// Schema version of this record.
    pub version: u16,
    /// The version's hash.
    pub hash: String,
    /// The first `seq` of the session's log sent with it.
    pub from_seq: u64,
    /// The session's turn number (its count of prepared turns) when it started.
    pub turn: u64,
    /// How many turns have used it in a row, this one included.
    pub turns: u64,
    /// When it was first used here.
    pub at_ms: u64,
    /// When it was last used here.
    pub last_ms: u64,
}

fn use_key(session_id: &str, seq: u64) -> Vec<u8> {
    let mut key = session_id.as_bytes().to_vec();
    key.push(b'/');
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

impl Store {
    /// Records that a turn of `session_id`, whose new messages start at `from_seq`, was sent with
    /// `prompt`: the version is stored if it is new, and a use row is written when the session's
    /// previous turn used another version (else the last row counts one more turn). Returns
    /// true when a new use row was written.
    pub fn record_prompt(
        &self,
        session_id: &str,
        from_seq: u64,
        turn: u64,
        prompt: &PromptVersion,
        now_ms: u64,
    ) -> Result<bool, StorageError> {
        let versions = self.tree(VERSIONS)?;
        if !versions.contains_key(prompt.hash.as_bytes())? {
            versions.insert(prompt.hash.as_bytes(), encode("prompt version", prompt)?)?;
        }
        let uses = self.tree(USES)?;
        let mut prefix = session_id.as_bytes().to_vec();
        prefix.push(b'/');
        if let Some(item) = uses.scan_prefix(&prefix).next_back() {
            let (key, raw) = item?;
            let mut last: PromptUse = decode("prompt use", &raw)?;
            if last.hash == prompt.hash {
                last.turns += 1;
                last.last_ms = now_ms;
                uses.insert(key, encode("prompt use", &last)?)?;
                return Ok(false);
            }
        }
        let row = PromptUse {
            version: RECORD_VERSION,
            hash: prompt.hash.clone(),
            from_seq,
            turn,
            turns: 1,
            at_ms: now_ms,
            last_ms: now_ms,
        };
        uses.insert(use_key(session_id, from_seq), encode("prompt use", &row)?)?;
        Ok(true)
    }

    /// A session's prompt uses in log order, each with its version.
    pub fn session_prompts(
        &self,
        session_id: &str,
    ) -> Result<Vec<(PromptUse, PromptVersion)>, StorageError> {
        let versions = self.tree(VERSIONS)?;
        let mut prefix = session_id.as_bytes().to_vec();
        prefix.push(b'/');
        let mut out = Vec::new();
        for item in self.tree(USES)?.scan_prefix(&prefix) {
            let (_, raw) = item?;
            let row: PromptUse = decode("prompt use", &raw)?;
            if let Some(version) = versions.get(row.hash.as_bytes())? {
                out.push((row, decode("prompt version", &version)?));
            }
        }
        Ok(out)
    }

    /// One stored version by its hash.
    pub fn prompt_version(&self, hash: &str) -> Result<Option<PromptVersion>, StorageError> {
        self.tree(VERSIONS)?
            .get(hash.as_bytes())?
            .map(|raw| decode("prompt version", &raw))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn each_version_is_stored_once_and_each_change_once_per_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let a = PromptVersion::new(
            Some("be terse".into()),
            Some("[{\"name\":\"bash\"}]".into()),
            1,
            10,
        );
        let b = PromptVersion::new(Some("be verbose".into()), None, 0, 20);
        assert_ne!(a.hash, b.hash);
        assert!(store.record_prompt("s1", 0, 1, &a, 10).unwrap());
        assert!(!store.record_prompt("s1", 2, 2, &a, 11).unwrap());
        assert!(store.record_prompt("s1", 4, 3, &b, 12).unwrap());
        assert!(store.record_prompt("s1", 6, 4, &a, 13).unwrap());
        assert!(store.record_prompt("s2", 0, 1, &a, 14).unwrap());
        let uses = store.session_prompts("s1").unwrap();
        let summary: Vec<(u64, u64, &str)> = uses
            .iter()
            .map(|(row, version)| (row.from_seq, row.turns, version.system.as_deref().unwrap()))
            .collect();
        assert_eq!(
            summary,
            vec![(0, 2, "be terse"), (4, 1, "be verbose"), (6, 1, "be terse")]
        );
        assert_eq!(store.tree(VERSIONS).unwrap().len(), 2);
        assert_eq!(store.prompt_version(&a.hash).unwrap(), Some(a));
        assert_eq!(store.session_prompts("s3").unwrap(), Vec::new());
    }
}
