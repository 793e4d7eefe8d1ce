//! Placeholder: the awc worker client (being written on another branch).

use super::{WorkerCall, WorkerReply, WorkerRoute};
use crate::ActorError;

/// Settings of the worker client.
#[derive(Debug, Clone, Default)]
pub struct WorkerSettings;

/// The worker client.
#[derive(Debug, Clone)]
pub struct WorkerClient;

impl WorkerClient {
    /// A client.
    pub fn new(_settings: WorkerSettings) -> Self {
        Self
    }

    /// Placeholder call.
    pub async fn call(
        &self,
        _route: &WorkerRoute,
        _call: &WorkerCall,
    ) -> Result<WorkerReply, ActorError> {
        Err(ActorError::WorkerFailed("not built".into()))
    }
}
