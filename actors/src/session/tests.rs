//! Tests of the session actor: reply order, stale replies, forks and counters.

use super::*;
use crate::registry::SessionRegistry;
use lore_proto::{Part, Role};
use std::time::Duration;

fn user(text: &str) -> Message {
    Message {
        role: Role::User,
        parts: vec![Part::Text { text: text.into() }],
    }
}

fn assistant(text: &str) -> Message {
    Message {
        role: Role::Assistant,
        parts: vec![Part::Text { text: text.into() }],
    }
}

/// A turn of `messages`, and where its plan arrives.
fn prepare(messages: Vec<Message>) -> (PrepareTurn, oneshot::Receiver<TurnPlan>) {
    let identities = Arc::new(messages.iter().map(Message::identity).collect());
    let spans = Arc::new((0..messages.len() as u32).map(|i| vec![i]).collect());
    let (answer, plan) = oneshot::channel();
    let turn = PrepareTurn {
        request: Arc::new(CanonicalRequest {
            messages,
            ..Default::default()
        }),
        identities,
        spans,
        protocol: Protocol::Anthropic,
        project: Some(ProjectHint {
            path: "/p".into(),
            confident: true,
        }),
        body: Bytes::new(),
        cards: None,
        context: None,
        route: None,
        unresolved: None,
        answer,
    };
    (turn, plan)
}

/// Sends a turn and waits for its plan; answers the turn number.
async fn send_turn(session: &Addr<SessionActor>, messages: Vec<Message>) -> u64 {
    let (turn, plan) = prepare(messages);
    session.send(turn).await.unwrap();
    plan.await.unwrap().turn
}

/// A store in a fresh directory and session `s1` over it, with `services`.
fn start_session(services: ContextServices) -> (tempfile::TempDir, Store, Addr<SessionActor>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let registry = SessionRegistry::new(store.clone(), Vec::new(), Duration::from_secs(60)).start();
    let session = SessionActor::new(SessionRecord::new("s1".into()), store.clone(), registry)
        .with_context(Arc::new(services))
        .start();
    (dir, store, session)
}

/// Ends turn `turn` with the reply `text`.
async fn answer(session: &Addr<SessionActor>, turn: u64, text: &str) {
    session
        .send(TurnCompleted {
            turn,
            reply: reply(text),
            plan_used: true,
        })
        .await
        .unwrap();
}

fn reply(text: &str) -> Reply {
    Reply {
        message: Some(assistant(text)),
        complete: true,
        ..Default::default()
    }
}

#[actix_rt::test]
async fn replies_land_in_order_and_stale_ones_stay_off_the_history() {
    let (_dir, store, session) = start_session(ContextServices::default());

    assert_eq!(send_turn(&session, vec![user("a")]).await, 1);
    answer(&session, 1, "A").await;
    // The client resends the reply and asks again: only the new question is stored.
    let history = vec![user("a"), assistant("A"), user("b")];
    assert_eq!(send_turn(&session, history.clone()).await, 2);
    // Turn 3 starts before turn 2's reply arrives (a regenerate): turn 2's reply is stale.
    assert_eq!(send_turn(&session, history).await, 3);
    answer(&session, 2, "B-old").await;
    answer(&session, 3, "B").await;

    let record = store.load_session("s1").unwrap().unwrap();
    let texts: Vec<String> = store
        .session_messages(&record)
        .unwrap()
        .iter()
        .map(|m| m.message.text())
        .collect();
    assert_eq!(texts, ["a", "A", "b", "B"]);
    let log: Vec<String> = store
        .session_log("s1")
        .unwrap()
        .iter()
        .map(|m| m.message.text())
        .collect();
    assert!(
        log.contains(&"B-old".to_string()),
        "the stale reply is kept off the path: {log:?}"
    );
    assert_eq!(record.project.as_deref(), Some("/p"));
    let counters = session.send(Observe).await.unwrap();
    assert_eq!(
        (counters.turns, counters.replies, counters.forks),
        (3, 3, 0)
    );
}

#[actix_rt::test]
async fn a_large_turn_keeps_its_parse_after_it_ends_and_a_small_one_does_not() {
    let (_dir, _store, session) = start_session(ContextServices::default());
    // (body bytes, whether the parse outlives the turn)
    for (n, (size, kept)) in [(KEEP_PARSE_MIN_BYTES, true), (1_000, false)]
        .into_iter()
        .enumerate()
    {
        let (mut turn, plan) = prepare(vec![user(&format!("question {n}"))]);
        turn.body = Bytes::from(vec![b' '; size]);
        let parse = Arc::downgrade(&turn.request);
        session.send(turn).await.unwrap();
        let number = plan.await.unwrap().turn;
        session.send(TurnEnded { turn: number }).await.unwrap();
        assert_eq!(
            parse.upgrade().is_some(),
            kept,
            "a {size}-byte turn's parse after the turn ended"
        );
    }
}

/// A knowledge search that only counts how often it was asked.
struct CountingFinder(Arc<std::sync::atomic::AtomicUsize>);

impl crate::ltm::KnowledgeFinder for CountingFinder {
    fn find(
        &self,
        _context: String,
        _project: Option<String>,
        _limit: usize,
    ) -> futures_util::future::BoxFuture<'static, Vec<(String, f32)>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { Vec::new() })
    }
}

#[actix_rt::test]
async fn no_knowledge_search_runs_before_any_knowledge_exists() {
    use lore_storage::memory::{Category, KnowledgeEntry};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let calls = Arc::new(AtomicUsize::new(0));
    let (_dir, store, session) = start_session(ContextServices {
        finder: Some(Arc::new(CountingFinder(calls.clone()))),
        ..ContextServices::default()
    });
    let mut history = vec![user("how do we deploy?")];
    for (turn, said) in [(1u64, "with the relay"), (2, "twice a day")] {
        if turn == 2 {
            // Knowledge arrives between the turns: now a search is worth its embedding.
            store
                .save_knowledge(&KnowledgeEntry {
                    id: "k1".into(),
                    version: 1,
                    project: Some("/p".into()),
                    category: Category::Pattern,
                    title: "Deploys go through the relay".into(),
                    content: "The relay retries twice.".into(),
                    confidence: 0.9,
                    source_session: None,
                    updated_by: "curator".into(),
                    created_at_ms: 1,
                    updated_at_ms: 1,
                    deleted: false,
                })
                .unwrap();
        }
        assert_eq!(send_turn(&session, history.clone()).await, turn);
        // The search, when there is one, is asked for inside this handler.
        answer(&session, turn, said).await;
        assert_eq!(
            calls.load(Ordering::SeqCst),
            usize::from(turn == 2),
            "knowledge searches after turn {turn}"
        );
        history.push(assistant(said));
        history.push(user("and then?"));
    }
}

#[actix_rt::test]
async fn after_the_database_reopens_a_turn_stores_again_what_the_disk_lost() {
    let (_dir, store, session) = start_session(ContextServices::default());
    assert_eq!(send_turn(&session, vec![user("a")]).await, 1);
    answer(&session, 1, "A").await;
    let stored_texts = |store: &Store| -> Vec<String> {
        let Some(record) = store.load_session("s1").unwrap() else {
            return Vec::new();
        };
        store
            .session_messages(&record)
            .unwrap()
            .iter()
            .map(|m| m.message.text())
            .collect()
    };
    assert_eq!(stored_texts(&store), ["a", "A"]);
    // What a reopen after a write failure leaves: the disk lost the session's last writes
    // (here all of them), and the database's generation moved on.
    store.delete_session("s1").unwrap();
    store.compact().unwrap();
    assert_eq!(store.generation(), 1);
    assert!(stored_texts(&store).is_empty());

    // The client resends the whole history with its next message: all of it is stored again.
    let turn = send_turn(&session, vec![user("a"), assistant("A"), user("b")]).await;
    assert_eq!(turn, 2);
    assert_eq!(stored_texts(&store), ["a", "A", "b"]);
    let log = store.session_log("s1").unwrap();
    let mut seqs: Vec<u64> = log.iter().map(|m| m.seq).collect();
    seqs.dedup();
    assert_eq!(seqs.len(), log.len(), "no seq written twice");
    assert!(seqs[0] >= 2, "seqs are not reused: {seqs:?}");
}
