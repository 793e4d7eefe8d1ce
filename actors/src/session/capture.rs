//! Storing what a session's requests and replies carry: the messages the actor has not seen
//! yet (the client resends the whole history every turn), a fork when the client rewrote its
//! history (nothing is overwritten), the reply of the open turn (a stale reply stays off the
//! current history), and the messages of the gateway's own follow-ups.

use lore_proto::{CanonicalRequest, Message, Protocol, Reply, Role};
use lore_storage::records::RECORD_VERSION;
use lore_storage::{
    ForkRecord, MessageSource, NewFork, PathEntry, PromptVersion, StoredMessage, now_ms,
};
use tracing::{info, warn};

use super::SessionActor;
use crate::error::ActorError;
use crate::history::common_prefix;
use crate::model::ProjectHint;
use crate::registry::{PathChanged, ResponseIdIssued};

/// The project of a session whose requests never stated one: `<prefix><session id>`.
pub const UNATTRIBUTED_PREFIX: &str = "/__lore_unattributed__/";

impl SessionActor {
    /// After the database was reopened (a write failure: sled's crash recovery keeps what was
    /// flushed, the last moments are gone), what this actor holds can be ahead of the disk. The
    /// record is read again and its path cut at the first message the disk lost, so this
    /// turn's request, which carries the whole history, stores the lost messages again. `seq`s
    /// are never reused.
    pub(super) fn resync_after_reopen(&mut self) {
        let generation = self.store.generation();
        if generation == self.generation {
            return;
        }
        let id = self.record.id.clone();
        let mut record = match self.store.load_session(&id) {
            Ok(Some(record)) => record,
            Ok(None) => lore_storage::SessionRecord::new(id.clone()),
            Err(err) => {
                // Tried again on the next turn.
                warn!(session = %id, error = %err, "the session could not be read again after the database reopened");
                return;
            }
        };
        let mut kept = record.path.len();
        for (at, entry) in record.path.iter().enumerate() {
            if !entry.is_stored() {
                continue;
            }
            match self.store.has_message(&id, entry.seq) {
                Ok(true) => {}
                Ok(false) => {
                    kept = at;
                    break;
                }
                Err(err) => {
                    warn!(session = %id, error = %err, "the session could not be read again after the database reopened");
                    return;
                }
            }
        }
        let lost = record.path.len() - kept;
        record.path.truncate(kept);
        record.next_seq = record.next_seq.max(self.record.next_seq);
        record.adopt_legacy_insertions();
        info!(
            session = %id,
            kept,
            lost_from_path = lost,
            behind = self.record.path.len().saturating_sub(kept),
            "the database was reopened; the session is read again and recaptures what was lost"
        );
        self.record = record;
        self.generation = generation;
    }

    /// Updates the record with a request's new messages (and a fork when the history was
    /// rewritten) and returns them, not yet written.
    pub(super) fn capture(
        &mut self,
        request: &CanonicalRequest,
        identities: &[[u8; 16]],
        protocol: Protocol,
        project: Option<&ProjectHint>,
    ) -> (Vec<StoredMessage>, Option<NewFork>) {
        let stored = self.record.path_identities();
        let continuation = request.previous_response_id.is_some();
        // A Responses continuation carries only the new input; everything in it is new.
        let shared = if continuation {
            self.record.path.len()
        } else {
            common_prefix(&stored, identities)
        };
        let mut forked = None;
        if !continuation && shared < self.record.path.len() {
            let replaced_seqs = self.record.path[shared..]
                .iter()
                .map(|entry| entry.seq)
                .collect();
            forked = Some(self.record.add_fork(ForkRecord {
                at_position: shared as u32,
                replaced_seqs,
                created_at_ms: now_ms(),
            }));
            self.record.path.truncate(shared);
            self.counters.forks += 1;
            info!(session = %self.record.id, at = shared, "client rewrote history; fork recorded");
        }
        let skip = if continuation { 0 } else { shared };
        let new_messages: Vec<StoredMessage> = request
            .messages
            .iter()
            .zip(identities.iter())
            .skip(skip)
            .map(|(message, identity)| {
                self.stored(message.clone(), *identity, MessageSource::Request, None)
            })
            .collect();
        self.record.protocol = Some(protocol);
        if request.model.is_some() {
            self.record.model = request.model.clone();
        }
        self.bind_project(project);
        self.record.updated_at_ms = now_ms();
        (new_messages, forked)
    }

    /// Writes a turn's new messages and fork with the record, then indexes the messages.
    pub(super) fn commit(
        &mut self,
        new_messages: &[StoredMessage],
        fork: Option<NewFork>,
        path_changed: bool,
    ) -> Result<(), ActorError> {
        let forks: Vec<NewFork> = fork.into_iter().collect();
        self.store
            .commit_turn_with_forks(&self.record, new_messages, &forks)?;
        self.index(new_messages);
        self.counters.messages_stored += new_messages.len() as u64;
        if path_changed {
            self.report_path();
        }
        Ok(())
    }

    /// Builds the stored form of a message and appends it to the path.
    pub(super) fn stored(
        &mut self,
        message: Message,
        identity: [u8; 16],
        source: MessageSource,
        reply: Option<&Reply>,
    ) -> StoredMessage {
        let seq = self.record.next_seq;
        self.record.next_seq += 1;
        let position = self.record.path.len() as u32;
        self.record.path.push(PathEntry {
            seq,
            identity,
            tokens: 0,
        });
        StoredMessage {
            version: RECORD_VERSION,
            session_id: self.record.id.clone(),
            seq,
            position,
            message,
            identity,
            source,
            created_at_ms: now_ms(),
            model: reply.and_then(|reply| reply.model.clone()),
            usage: reply.map(|reply| reply.usage),
            partial: reply.is_some_and(|reply| !reply.complete),
            context_layer: None,
        }
    }

    /// Builds the stored form of a reply that does not belong on the current history.
    fn stored_off_path(
        &mut self,
        message: Message,
        identity: [u8; 16],
        reply: &Reply,
    ) -> StoredMessage {
        let seq = self.record.next_seq;
        self.record.next_seq += 1;
        StoredMessage {
            version: RECORD_VERSION,
            session_id: self.record.id.clone(),
            seq,
            position: self.record.path.len() as u32,
            message,
            identity,
            source: MessageSource::Response,
            created_at_ms: now_ms(),
            model: reply.model.clone(),
            usage: Some(reply.usage),
            partial: !reply.complete,
            context_layer: None,
        }
    }

    /// Binds the session to the project its request states; without one, a session that has
    /// none goes to its own unattributed bucket (provisional), re-homed when a confident path
    /// arrives.
    pub(super) fn bind_project(&mut self, hint: Option<&ProjectHint>) {
        let Some(hint) = hint else {
            if self.record.project.is_none() {
                self.record.project = Some(format!("{UNATTRIBUTED_PREFIX}{}", self.record.id));
                self.record.project_provisional = true;
            }
            return;
        };
        let current_is_guess = self.record.project.is_none() || self.record.project_provisional;
        if current_is_guess && (hint.confident || self.record.project.is_none()) {
            self.record.project = Some(hint.path.clone());
            self.record.project_provisional = !hint.confident;
        } else if hint.confident && self.record.project.as_deref() != Some(hint.path.as_str()) {
            info!(session = %self.record.id, project = %hint.path, "session moved to another project");
            self.record.project = Some(hint.path.clone());
            self.record.project_provisional = false;
        }
    }

    /// Stores the reply of `turn`.
    pub(super) fn complete(&mut self, turn: u64, reply: Reply) -> Result<(), ActorError> {
        self.counters.replies += 1;
        let mut new_messages = Vec::new();
        let current = self.open_turn == Some(turn);
        if let Some(message) = reply.message.clone()
            && message.role == Role::Assistant
            && !message.parts.is_empty()
        {
            let identity = message.identity();
            if current {
                let tokens = crate::turn::units::estimate(&message);
                let mut stored =
                    self.stored(message, identity, MessageSource::Response, Some(&reply));
                // The layer the turn was sent at, for the dashboard (issue 14).
                stored.context_layer = self
                    .open
                    .as_ref()
                    .filter(|open| open.turn == turn)
                    .and_then(|open| open.plan.as_ref())
                    .map(|plan| plan.layer);
                new_messages.push(stored);
                if let Some(entry) = self.record.path.last_mut() {
                    entry.tokens = u32::try_from(tokens).unwrap_or(u32::MAX);
                }
                self.open_turn = None;
            } else if !self
                .record
                .path
                .iter()
                .any(|entry| entry.identity == identity)
            {
                // A reply to an older turn that the client did not resend: keep it in the
                // log, off the current history.
                new_messages.push(self.stored_off_path(message, identity, &reply));
            }
        }
        let usage = &mut self.record.usage;
        usage.input_tokens += reply.usage.input_tokens;
        usage.output_tokens += reply.usage.output_tokens;
        usage.cache_read_input_tokens += reply.usage.cache_read_input_tokens;
        usage.cache_creation_input_tokens += reply.usage.cache_creation_input_tokens;
        self.record.last_stop_reason = reply.stop_reason.clone();
        if let Some(board) = &self.board {
            let tool_call = reply.message.as_ref().is_some_and(Message::has_tool_call);
            board.reply_stopped(&self.record.id, tool_call);
        }
        self.record.turns += 1;
        self.record.updated_at_ms = now_ms();
        self.commit(&new_messages, None, !new_messages.is_empty())?;
        if let (Some(id), Some(Protocol::OpenAiResponses)) = (&reply.id, self.record.protocol) {
            self.registry.do_send(ResponseIdIssued {
                session_id: self.record.id.clone(),
                response_id: id.clone(),
            });
        }
        Ok(())
    }

    /// Opens a follow-up turn of the gateway's own after `after`, storing what it appends.
    pub(super) fn follow_up(&mut self, after: u64, appended: Vec<Message>) -> Option<u64> {
        let snapshot = self.record.clone();
        let turn = self.next_turn;
        self.next_turn += 1;
        // The reply that asked for the follow-up is stored already (its turn completed): only
        // what comes after it is new.
        let last = self.record.path.last().map(|entry| entry.identity);
        let mut appended = appended.into_iter().peekable();
        if appended
            .peek()
            .map(Message::identity)
            .is_some_and(|first| Some(first) == last)
        {
            appended.next();
        }
        let new_messages: Vec<StoredMessage> = appended
            .map(|message| {
                let identity = message.identity();
                self.stored(message, identity, MessageSource::Request, None)
            })
            .collect();
        self.record.updated_at_ms = now_ms();
        if let Err(err) = self.commit(&new_messages, None, true) {
            self.record = snapshot;
            self.note_failure(&err);
            return None;
        }
        self.open_turn = Some(turn);
        // The follow-up continues the same request (and stays in flight under its first turn):
        // its reply is counted but teaches the estimator nothing, as it carries more than the
        // plan did.
        if let Some(open) = self.open.as_mut().filter(|open| open.turn == after) {
            open.turn = turn;
            open.calibrate = false;
        }
        Some(turn)
    }

    /// A turn under `/lore:amnesia`: nothing is stored and nothing is planned; the path follows
    /// the conversation with identities only (no message behind them), so the session still
    /// matches its later requests and, once amnesia is off, does not capture what was said
    /// meanwhile.
    pub(super) fn forget_turn(&mut self, msg: super::PrepareTurn) {
        drop(msg.unresolved);
        let turn = self.next_turn;
        self.next_turn += 1;
        let continuation = msg.request.previous_response_id.is_some();
        self.follow_unstored(&msg.identities, continuation);
        self.open = None;
        self.open_turn = None;
        let _ = msg.answer.send(super::TurnPlan {
            turn,
            amnesia: true,
            ..super::TurnPlan::default()
        });
        self.record.updated_at_ms = now_ms();
        match self.store.save_session(&self.record) {
            Ok(()) => self.report_path(),
            Err(err) => self.note_failure(&err.into()),
        }
    }

    /// Moves the path onto `identities` without storing a message: the shared prefix stays,
    /// the rest becomes entries with a sequence number and no message behind it.
    fn follow_unstored(&mut self, identities: &[[u8; 16]], continuation: bool) {
        let stored = self.record.path_identities();
        let shared = if continuation {
            self.record.path.len()
        } else {
            common_prefix(&stored, identities)
        };
        self.record.path.truncate(shared);
        let skip = if continuation { 0 } else { shared };
        for identity in identities.iter().skip(skip) {
            let seq = PathEntry::UNSTORED | self.record.next_seq;
            self.record.next_seq += 1;
            self.record.path.push(PathEntry {
                seq,
                identity: *identity,
                tokens: 0,
            });
        }
    }

    /// `/lore:amnesia on|off`, persisted. `path` is the conversation with the command and the
    /// gateway's answer: they, and on `off` everything said under amnesia, join the path
    /// unstored, so the next request matches this session and captures only what is new. On
    /// also takes the session off the activity board, so no worker job starts for it.
    pub(super) fn set_amnesia(&mut self, on: bool, path: &[[u8; 16]]) -> Result<bool, ActorError> {
        let snapshot = self.record.clone();
        let changed = self.record.amnesia != on;
        self.record.amnesia = on;
        self.follow_unstored(path, false);
        self.record.updated_at_ms = now_ms();
        // A setting the user gave: on disk before it is confirmed, a crash keeps it.
        if let Err(err) = self
            .store
            .save_session(&self.record)
            .and_then(|()| self.store.flush())
        {
            self.record = snapshot;
            return Err(err.into());
        }
        self.report_path();
        if on && let Some(board) = &self.board {
            board.forget(&self.record.id);
        }
        if changed {
            info!(session = %self.record.id, on, "amnesia changed");
        }
        Ok(changed)
    }

    /// Stores what the model is told besides the conversation (the system prompt with the
    /// developer and system messages folded into it, the tool definitions as sent, the recall
    /// tool included), once per distinct version, and from which `seq` of the log this session
    /// used it. A failure is logged; the turn goes on.
    pub(super) fn capture_prompt(&mut self, msg: &super::PrepareTurn) {
        let tools = msg.request.tools_json.clone();
        let system = msg.request.system.clone().filter(|s| !s.is_empty());
        if system.is_none() && tools.is_none() {
            return;
        }
        let now = now_ms();
        let version = PromptVersion::new(system, tools, msg.request.tool_count as u32, now);
        let from_seq = self.record.next_seq;
        match self
            .store
            .record_prompt(&self.record.id, from_seq, self.next_turn, &version, now)
        {
            Ok(true) => {
                info!(session = %self.record.id, hash = %version.hash, tools = version.tool_count, "the model is told a new system prompt or tool set")
            }
            Ok(false) => {}
            Err(err) => warn!(session = %self.record.id, error = %err, "system prompt not stored"),
        }
    }

    pub(super) fn report_path(&self) {
        self.registry.do_send(PathChanged {
            session_id: self.record.id.clone(),
            path: self.record.path_identities(),
        });
    }
}
