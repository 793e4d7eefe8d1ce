//! Tests of the session actor: reply order, stale replies, forks and counters.

use super::*;
use crate::registry::SessionRegistry;
use lore_proto::Part;
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

fn prepare(turn: u64, messages: Vec<Message>) -> PrepareTurn {
    let identities = Arc::new(messages.iter().map(Message::identity).collect());
    PrepareTurn {
        turn,
        request: Arc::new(CanonicalRequest {
            messages,
            ..Default::default()
        }),
        identities,
        protocol: Protocol::Anthropic,
        project: Some(ProjectHint {
            path: "/p".into(),
            confident: true,
        }),
        cards: None,
    }
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
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let registry = SessionRegistry::new(store.clone(), Vec::new(), Duration::from_secs(60)).start();
    let session =
        SessionActor::new(SessionRecord::new("s1".into()), store.clone(), registry).start();

    session.send(prepare(1, vec![user("a")])).await.unwrap();
    session
        .send(TurnCompleted {
            turn: 1,
            reply: reply("A"),
        })
        .await
        .unwrap();
    // The client resends the reply and asks again: only the new question is stored.
    session
        .send(prepare(2, vec![user("a"), assistant("A"), user("b")]))
        .await
        .unwrap();
    // Turn 3 starts before turn 2's reply arrives (a regenerate): turn 2's reply is stale.
    session
        .send(prepare(3, vec![user("a"), assistant("A"), user("b")]))
        .await
        .unwrap();
    session
        .send(TurnCompleted {
            turn: 2,
            reply: reply("B-old"),
        })
        .await
        .unwrap();
    session
        .send(TurnCompleted {
            turn: 3,
            reply: reply("B"),
        })
        .await
        .unwrap();

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
