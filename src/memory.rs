//! Start-up of the memory workers: the `Curator` and the `Distiller` on one arbiter of their
//! own (their storage reads and worker calls never hold up the HTTP workers), polling the
//! activity board the gateway's handlers keep, reporting every worker call to the cost tracker
//! and waiting while it pauses background work.

use std::sync::Arc;

use actix::prelude::*;
use lore_actors::costs::CostTrackerHandle;
use lore_actors::curator::Curator;
use lore_actors::distiller::Distiller;
use lore_actors::indexer::Indexer;
use lore_actors::worker::ActivityBoard;
use lore_storage::Store;

use crate::memory_config::MemoryConfig;

/// The running memory workers.
#[derive(Clone)]
pub struct MemoryWorkers {
    /// The distillation scheduler.
    pub distiller: Addr<Distiller>,
    /// The knowledge curator.
    pub curator: Addr<Curator>,
}

/// Starts the workers, unless `LORE_MEMORY=off`.
pub fn start(
    config: &MemoryConfig,
    store: &Store,
    board: &Arc<ActivityBoard>,
    indexer: Option<Addr<Indexer>>,
    costs: Option<CostTrackerHandle>,
) -> Option<MemoryWorkers> {
    if !config.enabled {
        return None;
    }
    if config.upstream.is_some() && config.model.is_none() {
        tracing::warn!(
            "LORE_WORKER_UPSTREAM is set without LORE_WORKER_MODEL: worker calls will ask it for each session's own model name, which it may not know; set LORE_WORKER_MODEL"
        );
    }
    // Distillation and curation (parsing, storage reads) yield to the request path.
    let arbiter = lore_actors::background::low_priority_arbiter();
    let curator = {
        let (store, board, settings, indexer, costs) = (
            store.clone(),
            Arc::clone(board),
            config.settings.clone(),
            indexer.clone(),
            costs.clone(),
        );
        Curator::start_in_arbiter(&arbiter.handle(), move |_| {
            let curator = Curator::new(store, board, settings, indexer);
            match costs {
                Some(costs) => curator.with_costs(costs),
                None => curator,
            }
        })
    };
    let distiller = {
        let (store, board, settings) = (store.clone(), Arc::clone(board), config.settings.clone());
        let indexer = indexer.map(|indexer| indexer.recipient());
        let curator = curator.clone();
        Distiller::start_in_arbiter(&arbiter.handle(), move |_| {
            let distiller = Distiller::new(store, board, settings, indexer, Some(curator));
            match costs {
                Some(costs) => distiller.with_costs(costs),
                None => distiller,
            }
        })
    };
    // The arbiter runs until the system stops.
    drop(arbiter);
    Some(MemoryWorkers { distiller, curator })
}
