//! `ActivityBoard`: which sessions have a request in flight, when each was last active, how its
//! last reply stopped, and the worker route its latest request brought (in memory only).
//!
//! The gateway marks a request *before* it is forwarded: first as unresolved (its session is
//! not known yet), then, once capture has resolved it, as in flight for its session until the
//! response has been relayed to the end. Background work asks [`ActivityBoard::is_quiet`]
//! immediately before every worker call, so no worker call starts while a request of that
//! session is on its way, and none while a request is still being resolved.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::WorkerRoute;

/// After a reply that stopped for a tool call, a session counts as idle only once it has been
/// quiet for this many idle timeouts.
const TOOL_WAIT_FACTOR: u32 = 10;

/// What the board knows about one session.
#[derive(Debug, Clone)]
struct SessionActivity {
    in_flight: u32,
    last_active: Instant,
    last_stop_tool: bool,
    route: Option<Arc<WorkerRoute>>,
    /// Fingerprint of a route the provider refused; that route is not used again.
    refused: Option<[u8; 16]>,
    turns: u64,
    /// The context manager wants the session distilled ahead of need.
    distil_ahead: bool,
    /// How long the session's prompt cache lives (consolidations wait until it went cold).
    cache_ttl: Duration,
    /// The context manager left observation logs out of the prefix for its budget: the prefix
    /// changes anyway, so a consolidation costs no extra cache write.
    prefix_trimmed: bool,
}

/// How long a session's prompt cache is taken to live until its context manager says: nothing
/// of ours depends on it when the gateway does not manage the session's context.
const DEFAULT_CACHE_TTL: Duration = Duration::ZERO;

/// What a session's context manager tells the memory workers after planning a turn.
#[derive(Debug, Clone, Copy)]
pub struct ContextReport {
    /// It wants the session distilled ahead of need.
    pub distil_ahead: bool,
    /// How long the session's prompt cache lives.
    pub cache_ttl: Duration,
    /// The distilled prefix left observation logs out for its budget.
    pub prefix_trimmed: bool,
}

/// A session ready for background work.
#[derive(Debug, Clone)]
pub struct IdleSession {
    /// Session id.
    pub session_id: String,
    /// Where its worker calls go.
    pub route: Arc<WorkerRoute>,
    /// Turns completed since the gateway started.
    pub turns: u64,
    /// True when the session has been quiet for the idle timeout and its last reply did not
    /// stop for a tool call.
    pub idle: bool,
    /// The context manager asked for distillation ahead of need.
    pub distil_ahead: bool,
    /// True once the session's prompt cache has expired, or while its prefix leaves logs out
    /// for its budget: rewriting its prefix (a consolidation) costs nothing more.
    pub cache_cold: bool,
}

/// Shared by the HTTP handlers (writers) and the memory workers (readers).
#[derive(Debug, Default)]
pub struct ActivityBoard {
    sessions: Mutex<HashMap<String, SessionActivity>>,
    unresolved: AtomicUsize,
}

fn fingerprint(route: &WorkerRoute) -> [u8; 16] {
    let mut hash = Sha256::new();
    hash.update(route.url.as_bytes());
    for (name, value) in route.headers() {
        hash.update(name.as_bytes());
        hash.update([0]);
        hash.update(value.as_bytes());
        hash.update([0]);
    }
    let digest = hash.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

impl ActivityBoard {
    /// A new board.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, SessionActivity>> {
        // A panic while holding the lock leaves plain counters behind; keep using them.
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks a request whose session is not known yet; held until it is.
    pub fn begin_unresolved(self: &Arc<Self>) -> UnresolvedGuard {
        self.unresolved.fetch_add(1, Ordering::SeqCst);
        UnresolvedGuard {
            board: Arc::clone(self),
        }
    }

    /// Marks a request of `session_id` in flight until the guard drops, and keeps the route
    /// its request brought (a route the provider refused before stays refused).
    pub fn started(
        self: &Arc<Self>,
        session_id: &str,
        route: Option<WorkerRoute>,
    ) -> InFlightGuard {
        let mut sessions = self.lock();
        let activity = sessions
            .entry(session_id.to_string())
            .or_insert_with(|| SessionActivity {
                in_flight: 0,
                last_active: Instant::now(),
                last_stop_tool: false,
                route: None,
                refused: None,
                turns: 0,
                distil_ahead: false,
                cache_ttl: DEFAULT_CACHE_TTL,
                prefix_trimmed: false,
            });
        activity.in_flight += 1;
        activity.last_active = Instant::now();
        if let Some(route) = route {
            let print = fingerprint(&route);
            if activity.refused != Some(print) {
                activity.refused = None;
                activity.route = Some(Arc::new(route));
            }
        }
        InFlightGuard {
            board: Arc::clone(self),
            session_id: session_id.to_string(),
        }
    }

    /// Puts a session that no request brought (one imported from a harness's transcripts) on
    /// the board with `route`, so the memory workers distil it once it has been quiet for the
    /// idle timeout. A session the board already knows keeps what it has.
    pub fn adopt(&self, session_id: &str, route: WorkerRoute) {
        self.lock()
            .entry(session_id.to_string())
            .or_insert_with(|| SessionActivity {
                in_flight: 0,
                last_active: Instant::now(),
                last_stop_tool: false,
                route: Some(Arc::new(route)),
                refused: None,
                turns: 0,
                distil_ahead: false,
                cache_ttl: DEFAULT_CACHE_TTL,
                prefix_trimmed: false,
            });
    }

    /// Records how a session's reply stopped (`tool_call`: it stopped to run a tool, so the
    /// harness is about to send the result).
    pub fn reply_stopped(&self, session_id: &str, tool_call: bool) {
        if let Some(activity) = self.lock().get_mut(session_id) {
            activity.last_stop_tool = tool_call;
            activity.last_active = Instant::now();
            activity.turns += 1;
        }
    }

    /// What the session's context manager says: whether it wants distillation ahead of need,
    /// how long its prompt cache lives, and whether its prefix left logs out for its budget.
    pub fn context_report(&self, session_id: &str, report: ContextReport) {
        if let Some(activity) = self.lock().get_mut(session_id) {
            activity.distil_ahead = report.distil_ahead;
            activity.cache_ttl = report.cache_ttl;
            activity.prefix_trimmed = report.prefix_trimmed;
        }
    }

    /// Stops using `route` for the session: the provider refused it. A request that brings a
    /// different credential resumes the session's background work.
    pub fn refuse(&self, session_id: &str, route: &WorkerRoute) {
        if let Some(activity) = self.lock().get_mut(session_id) {
            let refused = fingerprint(route);
            activity.refused = Some(refused);
            // The route may have been replaced meanwhile by one with another model but the
            // same credential: that one is refused too.
            if activity
                .route
                .as_deref()
                .is_some_and(|current| fingerprint(current) == refused)
            {
                activity.route = None;
            }
        }
    }

    /// True when no request of the session is in flight and none is being resolved.
    pub fn is_quiet(&self, session_id: &str) -> bool {
        self.unresolved.load(Ordering::SeqCst) == 0
            && self
                .lock()
                .get(session_id)
                .is_none_or(|activity| activity.in_flight == 0)
    }

    /// Sessions with a usable route and no request in flight, each saying whether it is idle
    /// (quiet for `idle_after` and last reply not stopped for a tool, or quiet for ten times
    /// that).
    pub fn quiet_sessions(&self, idle_after: Duration) -> Vec<IdleSession> {
        if self.unresolved.load(Ordering::SeqCst) > 0 {
            return Vec::new();
        }
        let now = Instant::now();
        self.lock()
            .iter()
            .filter(|(_, activity)| activity.in_flight == 0)
            .filter_map(|(id, activity)| {
                Some(IdleSession {
                    session_id: id.clone(),
                    route: activity.route.clone()?,
                    turns: activity.turns,
                    idle: {
                        let quiet = now.duration_since(activity.last_active);
                        // A tool result that never came (the harness was closed) does not keep
                        // a session busy forever.
                        (!activity.last_stop_tool && quiet >= idle_after)
                            || quiet >= idle_after.saturating_mul(TOOL_WAIT_FACTOR)
                    },
                    distil_ahead: activity.distil_ahead,
                    cache_cold: activity.prefix_trimmed
                        || now.duration_since(activity.last_active) >= activity.cache_ttl,
                })
            })
            .collect()
    }

    /// Sessions with a request in flight, and requests not resolved yet.
    pub fn in_flight(&self) -> (usize, usize) {
        let busy = self
            .lock()
            .values()
            .filter(|activity| activity.in_flight > 0)
            .count();
        (busy, self.unresolved.load(Ordering::SeqCst))
    }

    /// True when the board has an entry for the session.
    pub fn knows(&self, session_id: &str) -> bool {
        self.lock().contains_key(session_id)
    }

    /// The session's requests in flight and when it was last active, if the board has it (the
    /// dashboard refuses to delete or move a session whose actor may still be running).
    pub fn activity_of(&self, session_id: &str) -> Option<(u32, Instant)> {
        self.lock()
            .get(session_id)
            .map(|activity| (activity.in_flight, activity.last_active))
    }

    /// Takes a session off the board, with its route (`/lore:amnesia on`): no worker job starts
    /// for it until a request of its puts it back.
    pub fn forget(&self, session_id: &str) {
        self.lock().remove(session_id);
    }

    /// Forgets sessions quiet for longer than `after` (their routes and credentials with them).
    pub fn forget_older_than(&self, after: Duration) {
        let now = Instant::now();
        self.lock().retain(|_, activity| {
            activity.in_flight > 0 || now.duration_since(activity.last_active) < after
        });
    }
}

/// Held while a request's session is being resolved.
#[derive(Debug)]
pub struct UnresolvedGuard {
    board: Arc<ActivityBoard>,
}

impl Drop for UnresolvedGuard {
    fn drop(&mut self) {
        self.board.unresolved.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Held while a session's request is in flight; dropping it ends the request.
#[derive(Debug)]
pub struct InFlightGuard {
    board: Arc<ActivityBoard>,
    session_id: String,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if let Some(activity) = self.board.lock().get_mut(&self.session_id) {
            activity.in_flight = activity.in_flight.saturating_sub(1);
            activity.last_active = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::worker::WorkerProtocol;

    fn route(key: &str) -> WorkerRoute {
        WorkerRoute::new(
            WorkerProtocol::Anthropic,
            "http://127.0.0.1:1/v1/messages",
            "m",
            vec![("x-api-key".into(), key.into())],
        )
    }

    #[test]
    fn a_session_is_quiet_only_without_requests_in_flight_or_unresolved() {
        let board = ActivityBoard::new();
        assert!(board.is_quiet("s"));
        let unresolved = board.begin_unresolved();
        assert!(
            !board.is_quiet("s"),
            "a request not resolved yet may be this session's"
        );
        let guard = board.started("s", Some(route("k1")));
        drop(unresolved);
        assert!(!board.is_quiet("s"));
        assert!(board.quiet_sessions(Duration::ZERO).is_empty());
        drop(guard);
        assert!(board.is_quiet("s"));
        let quiet = board.quiet_sessions(Duration::ZERO);
        assert_eq!(quiet.len(), 1);
        assert!(quiet[0].idle);
        assert!(!board.quiet_sessions(Duration::from_secs(60))[0].idle);
    }

    #[test]
    fn an_adopted_session_is_idle_with_its_route_and_keeps_a_live_one() {
        let board = ActivityBoard::new();
        board.adopt("imported", route("k-worker"));
        let quiet = board.quiet_sessions(Duration::ZERO);
        assert_eq!(quiet.len(), 1);
        assert!(quiet[0].idle);
        assert_eq!(quiet[0].route.headers()[0].1, "k-worker");
        let guard = board.started("live", Some(route("k-live")));
        board.adopt("live", route("k-worker"));
        drop(guard);
        let live = board
            .quiet_sessions(Duration::ZERO)
            .into_iter()
            .find(|s| s.session_id == "live")
            .unwrap();
        assert_eq!(
            live.route.headers()[0].1,
            "k-live",
            "adoption never replaces a route"
        );
    }

    #[test]
    fn a_tool_stop_is_not_idle_until_ten_timeouts_pass() {
        let idle_after = Duration::from_millis(20);
        let board = ActivityBoard::new();
        drop(board.started("s", Some(route("k1"))));
        board.reply_stopped("s", true);
        std::thread::sleep(Duration::from_millis(40));
        assert!(!board.quiet_sessions(idle_after)[0].idle);
        std::thread::sleep(Duration::from_millis(180));
        assert!(
            board.quiet_sessions(idle_after)[0].idle,
            "the tool result never came"
        );
        drop(board.started("s", None));
        board.reply_stopped("s", false);
        assert!(!board.quiet_sessions(idle_after)[0].idle);
        std::thread::sleep(Duration::from_millis(40));
        assert!(board.quiet_sessions(idle_after)[0].idle);
    }

    #[test]
    fn a_refused_route_stays_off_until_another_credential_arrives() {
        let board = ActivityBoard::new();
        drop(board.started("s", Some(route("bad"))));
        board.refuse("s", &route("bad"));
        assert!(board.quiet_sessions(Duration::ZERO).is_empty());
        drop(board.started("s", Some(route("bad"))));
        assert!(board.quiet_sessions(Duration::ZERO).is_empty());
        drop(board.started("s", Some(route("good"))));
        assert_eq!(board.quiet_sessions(Duration::ZERO).len(), 1);
    }
}
