//! One background job for one session: the context every step needs, and the one way a step
//! calls the worker model (board and quota checks first, usage reported to the `CostTracker`
//! after).

use std::rc::Rc;
use std::sync::Arc;

use actix::Recipient;
use lore_storage::Store;
use lore_storage::memory::{UsageTotals, WorkerBucket, day_of};
use lore_storage::now_ms;
use tracing::warn;

use super::MemorySettings;
use crate::ActorError;
use crate::costs::{CostTrackerHandle, RecordWorker};
use crate::indexer::IndexDocs;
use crate::worker::{ActivityBoard, WorkerCall, WorkerClient, WorkerReply, WorkerRoute};

/// Why a job stopped early.
#[derive(Debug)]
pub enum Stop {
    /// A request of the session arrived: the job yields and runs again on the next idle.
    Busy,
    /// A step failed; nothing of that step was written.
    Failed(ActorError),
}

impl From<ActorError> for Stop {
    fn from(err: ActorError) -> Self {
        Stop::Failed(err)
    }
}

impl From<lore_storage::StorageError> for Stop {
    fn from(err: lore_storage::StorageError) -> Self {
        Stop::Failed(ActorError::Storage(err))
    }
}

/// What a job works with.
#[derive(Clone)]
pub struct Job {
    /// Storage.
    pub store: Store,
    /// The worker client of the memory arbiter.
    pub client: Rc<WorkerClient>,
    /// Who is busy.
    pub board: Arc<ActivityBoard>,
    /// Where this session's worker calls go.
    pub route: Arc<WorkerRoute>,
    /// The session.
    pub session_id: String,
    /// Thresholds.
    pub settings: MemorySettings,
    /// The search index writer.
    pub indexer: Option<Recipient<IndexDocs>>,
    /// True after repeated failures: an unusable reply is given up (its sources marked as
    /// handled, still searchable as they are) instead of failing the job again.
    pub give_up: bool,
    /// Where every call's usage goes; without a tracker it is written to the ledger directly.
    pub costs: Option<CostTrackerHandle>,
}

impl Job {
    /// Calls the worker model, unless a request of the session is in flight or background work
    /// is paused for OAuth quota; reports the call's usage (or its failure) to the cost
    /// tracker, and a refused credential on the board.
    pub async fn ask(
        &self,
        bucket: WorkerBucket,
        system: &str,
        user: String,
        max_tokens: u32,
    ) -> Result<WorkerReply, Stop> {
        if !self.board.is_quiet(&self.session_id) || self.quota_paused() {
            return Err(Stop::Busy);
        }
        let call = WorkerCall {
            bucket,
            system: system.to_string(),
            user,
            max_tokens,
        };
        let board = &self.board;
        let session_id = self.session_id.as_str();
        let may_start = || board.is_quiet(session_id) && !self.quota_paused();
        let result = self.client.call_when(&self.route, &call, &may_start).await;
        if let Err(ActorError::WorkerYielded) = result {
            return Err(Stop::Busy);
        }
        let usage = match &result {
            Ok(reply) => reply.usage.clone(),
            Err(_) => UsageTotals {
                failures: 1,
                ..Default::default()
            },
        };
        self.report_usage(bucket, &result, usage);
        match result {
            Ok(reply) => Ok(reply),
            Err(err) => {
                if let ActorError::WorkerCredentialRefused { .. } = err {
                    self.board.refuse(&self.session_id, &self.route);
                    warn!(session = %self.session_id, error = %err, "background work paused");
                }
                Err(Stop::Failed(err))
            }
        }
    }

    /// True while the cost tracker pauses background work (OAuth quota at 95 % or more).
    pub fn quota_paused(&self) -> bool {
        self.costs
            .as_ref()
            .is_some_and(CostTrackerHandle::background_paused)
    }

    fn report_usage(
        &self,
        bucket: WorkerBucket,
        result: &Result<WorkerReply, ActorError>,
        usage: UsageTotals,
    ) {
        match &self.costs {
            Some(costs) => costs.record_worker(RecordWorker {
                session_id: Some(self.session_id.clone()),
                bucket,
                model: Some(match result {
                    Ok(reply) => reply.model.clone(),
                    Err(_) => self.route.model.clone(),
                }),
                usage,
                at_ms: now_ms(),
            }),
            None => {
                if let Err(err) = self
                    .store
                    .record_worker_usage(&day_of(now_ms()), bucket, &usage)
                {
                    warn!(error = %err, "worker usage could not be recorded");
                }
            }
        }
    }

    /// Sends documents to the search index (and from there to the embedder).
    pub fn index(&self, docs: Vec<lore_storage::IndexDoc>) {
        if let (Some(indexer), false) = (&self.indexer, docs.is_empty()) {
            indexer.do_send(IndexDocs { docs });
        }
    }
}
