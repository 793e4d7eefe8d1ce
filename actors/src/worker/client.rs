//! Placeholder: the awc worker client (being written).
/// Settings of the worker client.
#[derive(Debug, Clone)]
pub struct WorkerSettings;
/// The worker client.
#[derive(Debug, Clone)]
pub struct WorkerClient;
