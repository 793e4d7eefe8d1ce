//! Background work yields to the request path: the threads that commit the search index, embed,
//! backfill and distil run at the lowest scheduling priority an unprivileged process can ask for
//! (`SCHED_BATCH` at niceness 19 on Linux), and [`Throttle`] bounds their CPU share while
//! requests are in flight.
//!
//! Niceness on Linux is per thread and inherited by threads spawned later, so a library's own
//! worker threads (tantivy's indexing and merge threads) are lowered by creating them from a
//! lowered thread (the `Indexer` creates the index writer on its own; [`spawn_lowered`] runs
//! other work that way). Nothing the start-up or a request waits for runs lowered: on a busy
//! machine a thread at niceness 19 can wait for seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actix::Arbiter;
use thread_priority::{
    NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
    set_thread_priority_and_policy, thread_native_id,
};
use tracing::debug;

use crate::worker::ActivityBoard;

/// Whether a lowering already failed (logged once, then silent).
static WARNED: AtomicBool = AtomicBool::new(false);

/// Lowers the calling thread to `SCHED_BATCH` at niceness 19. Returns false where the system
/// refuses (the thread then keeps its priority; nothing else changes).
pub fn lower_current_thread() -> bool {
    let policy = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Batch);
    match set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, policy) {
        Ok(()) => true,
        Err(err) => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!(error = ?err, "cannot lower the priority of background threads; they compete with requests");
            }
            false
        }
    }
}

/// A new arbiter whose thread runs at background priority (its first task lowers it).
pub fn low_priority_arbiter() -> Arbiter {
    let arbiter = Arbiter::new();
    arbiter.spawn_fn(|| {
        lower_current_thread();
    });
    arbiter
}

/// Runs `work` on a new background-priority thread and waits for it: whatever threads `work`
/// creates inherit the low priority.
pub fn spawn_lowered<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::Builder::new()
        .name("lore-lowered".into())
        .spawn(move || {
            lower_current_thread();
            work()
        })
        .ok()?
        .join()
        .ok()
}

/// While requests are in flight, background work rests for `ratio` times the time its last step
/// took, so it takes at most `1 / (1 + ratio)` of a core beside them; with no request in flight
/// it runs flat out (at low priority).
#[derive(Debug, Clone)]
pub struct Throttle {
    board: Option<Arc<ActivityBoard>>,
    ratio: u32,
    max_rest: Duration,
}

/// Default rest per unit of work while requests are in flight: 3, a quarter of a core.
pub const DEFAULT_REST_RATIO: u32 = 3;
/// Longest single rest, so a long step does not stall background work for long.
const MAX_REST: Duration = Duration::from_secs(2);

impl Throttle {
    /// A throttle reading `board`; `None` never rests.
    pub fn new(board: Option<Arc<ActivityBoard>>) -> Self {
        Self {
            board,
            ratio: DEFAULT_REST_RATIO,
            max_rest: MAX_REST,
        }
    }

    /// How long to rest after a step that took `worked`: zero when no request is in flight.
    pub fn rest_after(&self, worked: Duration) -> Duration {
        let Some(board) = &self.board else {
            return Duration::ZERO;
        };
        let (busy, unresolved) = board.in_flight();
        if busy == 0 && unresolved == 0 {
            return Duration::ZERO;
        }
        let rest = worked.saturating_mul(self.ratio).min(self.max_rest);
        debug!(
            ?rest,
            busy, unresolved, "background work rests for requests"
        );
        rest
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The nice value of the calling thread, from `/proc/thread-self/stat`.
    fn own_niceness() -> i64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // After the command in parentheses: state is field 3, nice is field 19.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        after.split(' ').nth(16).unwrap().parse().unwrap()
    }

    #[test]
    fn a_lowered_thread_runs_at_niceness_19_and_its_children_inherit_it() {
        let (own, child) = spawn_lowered(|| {
            let child = std::thread::spawn(own_niceness).join().unwrap();
            (own_niceness(), child)
        })
        .unwrap();
        assert_eq!(own, 19, "the lowered thread");
        assert_eq!(
            child, 19,
            "a thread it spawned (how tantivy's threads are lowered)"
        );
        assert_eq!(
            std::thread::spawn(own_niceness).join().unwrap(),
            0,
            "other threads keep their priority"
        );
    }

    #[test]
    fn the_throttle_rests_only_while_requests_are_in_flight() {
        let board = ActivityBoard::new();
        let throttle = Throttle::new(Some(Arc::clone(&board)));
        let step = Duration::from_millis(10);
        assert_eq!(throttle.rest_after(step), Duration::ZERO);
        let guard = board.started("s", None);
        assert_eq!(throttle.rest_after(step), step * DEFAULT_REST_RATIO);
        assert_eq!(
            throttle.rest_after(Duration::from_secs(60)),
            MAX_REST,
            "one rest is capped"
        );
        drop(guard);
        assert_eq!(throttle.rest_after(step), Duration::ZERO);
        let unresolved = board.begin_unresolved();
        assert!(throttle.rest_after(step) > Duration::ZERO);
        drop(unresolved);
        assert_eq!(Throttle::new(None).rest_after(step), Duration::ZERO);
    }
}
