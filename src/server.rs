//! Start-up and shutdown of the gateway process.
//!
//! Start: open storage (exclusive), start one arbiter per core for session actors, one for
//! the registry and one for the cost tracker, bind the listener, write `gateway.pid` and `gateway.port`, serve. Shutdown
//! (SIGINT or SIGTERM, handled by actix-web): stop accepting, let in-flight requests finish,
//! then flush storage and remove the pid and port files.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Instant;

use actix::{Actor, Addr, Arbiter};
use actix_web::{App, HttpServer, web};
use anyhow::Context as _;
use std::sync::Arc;

use lore_actors::SessionRegistry;
use lore_actors::cards::library::CardLibrary;
use lore_actors::costs::CostTrackerHandle;
use lore_actors::indexer::{Indexer, Rebuild};
use lore_actors::worker::ActivityBoard;
use lore_storage::{SearchIndex, Store, Vault};
use tracing::{info, warn};

use crate::config::GatewayConfig;
use crate::embeddings::Embeddings;
use crate::gateway::forward::UpstreamClient;
use crate::http::routes;

/// State shared by every worker.
pub struct AppState {
    /// The configuration the gateway started with.
    pub config: GatewayConfig,
    /// The session registry.
    pub registry: Addr<SessionRegistry>,
    /// Storage, for management reads.
    pub store: Store,
    /// The card book, when cards are on.
    pub cards: Option<Arc<CardLibrary>>,
    /// The search index, for recall (`None` when it could not be opened).
    pub index: Option<Arc<SearchIndex>>,
    /// The index writer, for `POST /api/v1/reindex`.
    pub indexer: Option<Addr<Indexer>>,
    /// The embedding model and the vectors.
    pub embeddings: Embeddings,
    /// Which sessions have a request in flight (the memory workers wait for quiet).
    pub board: Arc<ActivityBoard>,
    /// The memory workers, unless `LORE_MEMORY=off`.
    pub memory: Option<crate::memory::MemoryWorkers>,
    /// The cost tracker, unless `LORE_COSTS=off`.
    pub costs: Option<CostTrackerHandle>,
    /// What the request path's cost hook remembers between requests.
    pub costs_hook: crate::gateway::costs_hook::HookState,
    /// Process start, for `/health`.
    pub started_at: Instant,
    /// Storage checks and actor heartbeats, for `/health`.
    pub watchdog: crate::watchdog::Watchdog,
    /// What the pruner has done, for `/health`.
    pub retention: Arc<std::sync::RwLock<lore_actors::pruner::PrunerCounters>>,
}

/// Name of the file holding the gateway's pid.
pub const PID_FILE: &str = "gateway.pid";
/// Name of the file holding the gateway's port.
pub const PORT_FILE: &str = "gateway.port";

/// Runs the gateway until it is told to stop.
pub async fn run(config: GatewayConfig) -> anyhow::Result<()> {
    let started_at = Instant::now();
    // awc's rustls connector needs a process-wide crypto provider; a second install is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = Store::open(&config.data_dir.join("db")).map_err(|err| anyhow::anyhow!("{err}"))?;
    if config.context.settings.enabled {
        warm_up_tokenizer();
    }
    let cores = config.workers.max(1);
    let session_arbiters: Vec<Arbiter> = (0..cores).map(|_| Arbiter::new()).collect();
    let registry_arbiter = Arbiter::new();
    // Index commits are background work: their thread, and tantivy's own indexing and merge
    // threads (the Indexer creates the writer on its lowered thread), run at low priority.
    let index_arbiter = lore_actors::background::low_priority_arbiter();
    let (index, indexer) = match SearchIndex::open(&config.data_dir.join("index")) {
        Ok((index, rebuilt)) => {
            let index = Arc::new(index);
            let writer = Indexer::new(index.clone(), store.clone());
            let indexer = Indexer::start_in_arbiter(&index_arbiter.handle(), |_| writer);
            if rebuilt {
                // A new or reset index: fill it from storage in the background.
                indexer.do_send(Rebuild);
            }
            (Some(index), Some(indexer))
        }
        Err(err) => {
            warn!(error = %err, "search index unavailable; capture continues, recall is off");
            (None, None)
        }
    };
    let mut registry = SessionRegistry::new(
        store.clone(),
        session_arbiters.iter().map(Arbiter::handle).collect(),
        config.eviction_after,
    );
    if let Some(indexer) = &indexer {
        registry = registry.with_indexer(indexer.clone().recipient());
    }
    let board = ActivityBoard::new();
    // The cost tracker runs on its own arbiter, under a supervisor that restarts it.
    let costs_arbiter = Arbiter::new();
    let costs = config.costs.enabled.then(|| {
        CostTrackerHandle::start(
            store.clone(),
            config.costs.settings.clone(),
            &costs_arbiter.handle(),
        )
    });
    let memory = crate::memory::start(
        &config.memory,
        &store,
        &board,
        indexer.clone(),
        costs.clone(),
    );
    let embeddings = if config.embeddings {
        Embeddings::start(
            &store,
            &board,
            indexer.clone(),
            memory.as_ref().map(|workers| workers.curator.clone()),
        )
    } else {
        Embeddings::off(
            &store,
            "embeddings are switched off (LORE_EMBEDDINGS=off)",
            "unset LORE_EMBEDDINGS to use them",
        )
    }
    .with_reranker(lore_actors::reranker::Reranker::new(
        config.rerank,
        lore_actors::reranker::RerankerConfig::beside(
            &lore_actors::embedder::EmbedderConfig::from_env(),
        ),
    ));
    // Sessions pin the knowledge the recall engine finds relevant to them.
    let mut context = (*config.context).clone();
    context.finder = Some(Arc::new(crate::ltm_search::RecallFinder {
        index: index.clone(),
        embeddings: embeddings.clone(),
        store: store.clone(),
    }));
    registry = registry
        .with_board(Arc::clone(&board))
        .with_context(Arc::new(context));
    let registry = SessionRegistry::start_in_arbiter(&registry_arbiter.handle(), |_| registry);

    let listener = TcpListener::bind((config.host.as_str(), config.port))
        .with_context(|| format!("cannot listen on {}:{} (is another gateway running? try `lore status`, or pass --port)", config.host, config.port))?;
    let port = listener.local_addr()?.port();
    let max_body = config.max_body_bytes;
    let workers = config.workers;
    let data_dir = config.data_dir.clone();
    let cards = config.cards_vault.as_ref().map(|vault| {
        let library = CardLibrary::new(Vault::new(vault), config.card_settings.clone());
        library.watch(std::time::Duration::from_secs(2));
        library
    });
    let retention = crate::retention::start(
        config.retention.clone(),
        &store,
        index.clone(),
        &config.data_dir,
    );
    let watchdog = crate::watchdog::Watchdog::start(crate::watchdog::Watched {
        store: store.clone(),
        registry: registry.clone(),
        indexer: indexer.clone(),
        embeddings: embeddings.clone(),
        memory: memory.clone(),
    });
    let state = web::Data::new(AppState {
        config,
        registry,
        store: store.clone(),
        cards,
        index,
        indexer,
        embeddings,
        board,
        memory,
        costs,
        costs_hook: Default::default(),
        started_at,
        watchdog,
        retention,
    });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(web::Data::new(UpstreamClient::new()))
            .app_data(web::PayloadConfig::new(max_body))
            .configure(routes::configure)
    })
    .workers(workers)
    .tcp_nodelay(true)
    .keep_alive(actix_web::http::KeepAlive::Os)
    .client_request_timeout(std::time::Duration::ZERO)
    .client_disconnect_timeout(std::time::Duration::from_secs(1))
    .shutdown_timeout(5)
    .listen(listener)?
    .run();

    write_runtime_files(&data_dir, port)?;
    info!(port, data_dir = %data_dir.display(), ms = started_at.elapsed().as_millis() as u64, "lore gateway listening");
    let served = server.await;
    if let Err(err) = store.flush() {
        warn!(error = %err, "final flush failed");
    }
    remove_runtime_files(&data_dir);
    for arbiter in session_arbiters
        .iter()
        .chain([&registry_arbiter, &costs_arbiter])
    {
        arbiter.stop();
    }
    info!("lore gateway stopped");
    served.context("the HTTP server failed")
}

fn write_runtime_files(data_dir: &Path, port: u16) -> anyhow::Result<()> {
    write_atomic(&data_dir.join(PORT_FILE), &port.to_string())?;
    write_atomic(&data_dir.join(PID_FILE), &std::process::id().to_string())?;
    Ok(())
}

fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, contents)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn remove_runtime_files(data_dir: &Path) {
    // Only remove the files if they still describe this process.
    let ours = std::fs::read_to_string(data_dir.join(PID_FILE))
        .ok()
        .is_some_and(|pid| pid.trim() == std::process::id().to_string());
    if ours {
        let _ = std::fs::remove_file(data_dir.join(PID_FILE));
        let _ = std::fs::remove_file(data_dir.join(PORT_FILE));
    }
}

/// Where a running gateway can be reached, read from the data directory.
/// Builds the token estimator's tables on a thread of their own (about 100 ms of CPU), so the
/// first turn after a start does not wait for them: the context manager estimates every new
/// message with it.
fn warm_up_tokenizer() {
    let spawned = std::thread::Builder::new()
        .name("tokenizer-warm-up".into())
        .spawn(lore_actors::tokens::BpeTokenCounter::warm_up);
    if let Err(err) = spawned {
        warn!(error = %err, "could not build the token estimator ahead; the first turn builds it");
    }
}

pub fn running_gateway(data_dir: &Path) -> Option<(u32, u16)> {
    let pid = std::fs::read_to_string(data_dir.join(PID_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let port = std::fs::read_to_string(data_dir.join(PORT_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some((pid, port))
}

/// The log file of a daemonised gateway.
pub fn log_file(data_dir: &Path) -> PathBuf {
    data_dir.join("lore.log")
}
