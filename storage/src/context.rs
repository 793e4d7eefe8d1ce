//! The persisted state of a session's context manager and of its long-term knowledge in the
//! prompt ([`LtmRecord`]): everything the next turn needs to plan
//! the same bytes again after a restart (the layer and its floors, the calibration, the frozen
//! distilled prefix, the pinned raw window, the tool-output decisions, the cache lifetime), and
//! what `lore status` shows. It rides in the [`crate::SessionRecord`].

use serde::{Deserialize, Serialize};

/// The context manager's state for one session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextRecord {
    /// Layer of the latest planned turn (0–4).
    #[serde(default)]
    pub last_layer: u8,
    /// Floor raised by a "prompt is too long" answer (0: none); kept until the client's history
    /// shrinks (it compacted or rewrote the conversation).
    #[serde(default)]
    pub force_min_layer: u8,
    /// True once the session was planned at layer 1 or more: it does not go back to 0 unless
    /// the client's history really shrank.
    #[serde(default)]
    pub prefix_present: bool,
    /// True once an upstream reply calibrated the estimator.
    #[serde(default)]
    pub calibrated: bool,
    /// Tokens the upstream counts beyond our estimate of the messages (system prompt, tools,
    /// framing): an exponential moving average.
    #[serde(default)]
    pub overhead: f64,
    /// Our estimate of the messages sent in the latest turn.
    #[serde(default)]
    pub last_estimate: u64,
    /// What the upstream reported for the latest turn (input + cache read + cache creation).
    #[serde(default)]
    pub last_actual_input: u64,
    /// Cache reads of the latest turn.
    #[serde(default)]
    pub last_cache_read: u64,
    /// Cache writes of the latest turn.
    #[serde(default)]
    pub last_cache_write: u64,
    /// Turns in a row that wrote more of the prompt to the cache than they read.
    #[serde(default)]
    pub consecutive_busts: u32,
    /// Cache busts counted over the session.
    #[serde(default)]
    pub busts: u64,
    /// Turns in a row whose reply reported no cache write (free-write or non-caching provider).
    #[serde(default)]
    pub zero_write_turns: u32,
    /// The last (up to 20) turns: true where the cache was cold (read 0, write > 0).
    #[serde(default)]
    pub cold_turns: Vec<bool>,
    /// True while the conversation breakpoint uses the 1-hour lifetime.
    #[serde(default)]
    pub ttl_1h: bool,
    /// Turns in a row with under 20 % cold turns while at the 1-hour lifetime.
    #[serde(default)]
    pub warm_streak: u32,
    /// Identity of the message the pinned raw window starts at.
    #[serde(default)]
    pub window_start: Option<[u8; 16]>,
    /// The raw budget the window was pinned with.
    #[serde(default)]
    pub window_budget: u64,
    /// Highest distilled budget seen (the prefix is not re-trimmed when the budget wobbles).
    #[serde(default)]
    pub distilled_high_water: u64,
    /// The distilled prefix as frozen: the observation logs rendered, in order (`n` of each).
    #[serde(default)]
    pub prefix_logs: Vec<u64>,
    /// Which selection of logs the prefix holds (`all`, `recent`, `top`), empty when none.
    #[serde(default)]
    pub prefix_kind: String,
    /// Tool call ids whose outputs are replaced by an annotation (kept so each one stays so).
    #[serde(default)]
    pub stripped_calls: Vec<String>,
    /// Tool call ids whose outputs are collapsed as duplicates of a later one.
    #[serde(default)]
    pub duplicate_calls: Vec<String>,
    /// When the latest request was planned, ms since the epoch.
    #[serde(default)]
    pub last_request_ms: u64,
    /// Messages in the latest request.
    #[serde(default)]
    pub last_message_count: u32,
    /// Turns planned.
    #[serde(default)]
    pub turns_planned: u64,
    /// Layer changes over the session.
    #[serde(default)]
    pub layer_changes: u64,
    /// Why the latest layer was chosen.
    #[serde(default)]
    pub last_reason: String,
    /// Our total estimate of the latest request (messages + overhead).
    #[serde(default)]
    pub last_total_estimate: u64,
    /// The layer-0 cap of the latest turn, in tokens.
    #[serde(default)]
    pub last_cap: u64,
    /// Cache reads summed over the session's replies.
    #[serde(default)]
    pub total_cache_read: u64,
    /// Input tokens (uncached + read + write) summed over the session's replies.
    #[serde(default)]
    pub total_input: u64,
    /// What re-sending the prompt really cost per million tokens over recent turns (reads,
    /// writes and uncached input together): when it is dearer than the table's cache-read price,
    /// the layer-0 cap tightens (0 until measured).
    #[serde(default)]
    pub reread_price: f64,
    /// The window the provider itself stated in a "prompt is too long" answer (0: none): the
    /// model's window is taken as no larger from then on.
    #[serde(default)]
    pub learned_window: u64,
    /// Set when the provider manages the context itself (a stored `previous_response_id`
    /// chain, Anthropic `context_management`): Lore stays at layer 0 and says why.
    #[serde(default)]
    pub provider_managed: Option<String>,
}

/// What a session's prompt carries of long-term knowledge, frozen so it stays byte-stable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LtmRecord {
    /// system[1]: the stable baseline (a note, preferences, entities, the catalogue), computed
    /// on the session's first turn and never again; empty when there was nothing to say.
    #[serde(default)]
    pub stable: Option<String>,
    /// system[2]: the context-bound entries as first pinned; kept byte for byte.
    #[serde(default)]
    pub pinned: Option<String>,
    /// `id:signature` of each entry in `pinned` (or shown by a delta since).
    #[serde(default)]
    pub keys: Vec<String>,
    /// Knowledge deltas of records written before `SessionRecord::ledger` (which holds them
    /// now, with the card blocks); moved there when the session is loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deltas: Vec<DeltaRecord>,
    /// Entries waiting for the next turn boundary to be shown as a delta (`id:signature`).
    #[serde(default)]
    pub pending: Vec<String>,
    /// The knowledge epoch the candidates were last computed at.
    #[serde(default)]
    pub epoch: u64,
    /// When the candidates were last computed, ms since the epoch.
    #[serde(default)]
    pub checked_ms: u64,
    /// Turns planned since the session started (system[2] waits for the second).
    #[serde(default)]
    pub turns: u64,
}

/// One knowledge update in the conversation: a fixed notice and the entries, before a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaRecord {
    /// Position (in the client's message array) of the message it is inserted before.
    pub position: u32,
    /// Identity of that message; a different message there re-anchors the delta.
    pub anchor: [u8; 16],
    /// The assistant half's text.
    pub text: String,
    /// `id:signature` of the entries it shows.
    pub keys: Vec<String>,
}
