#![allow(clippy::unwrap_used)]

use super::*;
use crate::memory::{DistillState, Distillation, Entity};
use crate::records::{
    ForkRecord, MessageSource, PathEntry, RECORD_VERSION, SessionRecord, StoredMessage,
};
use lore_proto::{Message, Part, Role};

fn message(session: &str, seq: u64) -> StoredMessage {
    let message = Message {
        role: Role::User,
        parts: vec![Part::Text {
            text: format!("m{seq}"),
        }],
    };
    StoredMessage {
        version: RECORD_VERSION,
        session_id: session.into(),
        seq,
        position: seq as u32,
        identity: message.identity(),
        message,
        source: MessageSource::Request,
        created_at_ms: 0,
        model: None,
        usage: None,
        partial: false,
    }
}

fn session(store: &Store, id: &str, messages: u64) -> SessionRecord {
    let mut record = SessionRecord::new(id.into());
    let stored: Vec<StoredMessage> = (0..messages).map(|seq| message(id, seq)).collect();
    for m in &stored {
        record.path.push(PathEntry {
            seq: m.seq,
            identity: m.identity,
            tokens: 0,
        });
    }
    record.forks.push(ForkRecord {
        at_position: 0,
        replaced_seqs: vec![],
        created_at_ms: 0,
    });
    record.next_seq = messages;
    record.project = Some("/p".into());
    store.commit_turn(&record, &stored).unwrap();
    store.index_fingerprint("fp", id).unwrap();
    store.index_header("x-session-id:a", id).unwrap();
    record
}

fn distillation(session: &str, n: u64) -> Distillation {
    Distillation {
        session_id: session.into(),
        n,
        project: None,
        observations: "obs".into(),
        generation: 0,
        source_seqs: vec![0],
        consumed: vec![],
        source_tokens: 10,
        tokens: 2,
        archived: false,
        model: None,
        created_at_ms: 0,
    }
}

#[test]
fn deleting_a_session_removes_its_log_and_memory_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    session(&store, "aaaa", 3);
    session(&store, "aaaab", 2);
    store
        .commit_distillations(
            "aaaa",
            &DistillState::default(),
            &[distillation("aaaa", 0), distillation("aaaa", 1)],
        )
        .unwrap();
    store
        .commit_distillations(
            "aaaab",
            &DistillState::default(),
            &[distillation("aaaab", 0)],
        )
        .unwrap();

    let deleted = store.delete_session("aaaa").unwrap().unwrap();
    assert_eq!((deleted.messages, deleted.distillations), (3, 2));
    assert!(deleted.doc_ids.contains(&"t:aaaa:2".to_string()));
    assert!(deleted.doc_ids.contains(&"d:aaaa:1".to_string()));
    assert!(store.load_session("aaaa").unwrap().is_none());
    assert!(store.session_log("aaaa").unwrap().is_empty());
    assert!(store.session_distillations("aaaa").unwrap().is_empty());
    assert_eq!(store.sessions_for_fingerprint("fp").unwrap(), vec!["aaaab"]);
    assert_eq!(
        store.sessions_for_header("x-session-id:a").unwrap(),
        vec!["aaaab"]
    );
    // The neighbour whose id starts with the deleted one keeps everything.
    assert_eq!(store.session_log("aaaab").unwrap().len(), 2);
    assert_eq!(store.session_distillations("aaaab").unwrap().len(), 1);
    assert_eq!(store.session_log("aaaab").unwrap().len(), 2);
    assert!(store.delete_session("aaaa").unwrap().is_none());
}

#[test]
fn summaries_count_without_keeping_paths_and_moves_are_confident() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut record = session(&store, "s1", 4);
    record.project_provisional = true;
    store.save_session(&record).unwrap();
    let summaries = store.session_summaries().unwrap();
    assert_eq!(summaries.len(), 1);
    assert_eq!((summaries[0].messages, summaries[0].forks), (4, 1));
    assert!(summaries[0].project_provisional);
    assert_eq!(store.session_count().unwrap(), 1);

    store
        .commit_distillations("s1", &DistillState::default(), &[distillation("s1", 0)])
        .unwrap();
    let (moved, distillations) = store.move_session("s1", "/elsewhere").unwrap().unwrap();
    assert_eq!(distillations.len(), 1);
    assert_eq!(
        store.session_distillations("s1").unwrap()[0]
            .project
            .as_deref(),
        Some("/elsewhere")
    );
    assert_eq!(moved.project.as_deref(), Some("/elsewhere"));
    assert!(!moved.project_provisional);
    let reread = store.load_session("s1").unwrap().unwrap();
    assert_eq!(reread.project.as_deref(), Some("/elsewhere"));
    assert_eq!(reread.path, record.path, "only the project changes");
    assert!(store.move_session("nope", "/x").unwrap().is_none());
}

#[test]
fn entities_are_saved_together_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let entity = |id: &str| Entity {
        id: id.into(),
        project: None,
        entity_type: "tool".into(),
        canonical_name: id.into(),
        aliases: vec![],
        description: String::new(),
        relations: vec![],
        updated_at_ms: 0,
    };
    store.save_entities(&[entity("a"), entity("b")]).unwrap();
    assert_eq!(store.all_entities().unwrap().len(), 2);
    assert!(store.delete_entity("a").unwrap());
    assert!(!store.delete_entity("a").unwrap());
    assert_eq!(store.all_entities().unwrap().len(), 1);
}
