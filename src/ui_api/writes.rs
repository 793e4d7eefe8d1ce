//! The management writes of the dashboard: delete or move a session, edit a knowledge entry or
//! change its scope, merge two entities. Each change reaches the search index (and through it
//! the vectors) right after it is stored.

use actix_web::web;
use lore_actors::documents::distillation_doc;
use lore_actors::indexer::{IndexDocs, RemoveDocs, message_doc};
use serde_json::json;

use super::{ApiResult, ok, parse_body};
use crate::dashboard::error::blocking;
use crate::dashboard::knowledge::{EntryRow, apply_edit, apply_scope};
use crate::dashboard::{entities, sessions};
use crate::server::AppState;

fn remove_docs(state: &AppState, ids: Vec<String>) {
    if let Some(indexer) = &state.indexer
        && !ids.is_empty()
    {
        indexer.do_send(RemoveDocs { ids });
    }
}

fn index_docs(state: &AppState, docs: Vec<lore_storage::IndexDoc>) {
    if let Some(indexer) = &state.indexer
        && !docs.is_empty()
    {
        indexer.do_send(IndexDocs { docs });
    }
}

/// `DELETE /api/v1/sessions/{id}`: the session, its messages and its distillations.
pub async fn delete_session(path: web::Path<String>, state: web::Data<AppState>) -> ApiResult {
    let id = path.into_inner();
    sessions::refuse_live(&state.board, &id, state.config.eviction_after)?;
    let store = state.store.clone();
    let gone = id.clone();
    let deleted = blocking(move || sessions::delete(&store, &gone)).await?;
    let (messages, distillations) = (deleted.messages, deleted.distillations);
    remove_docs(&state, deleted.doc_ids);
    ok(&json!({
        "ok": true,
        "id": id,
        "deleted_messages": messages,
        "deleted_distillations": distillations,
    }))
}

/// `POST /api/v1/sessions/{id}/move` with `{"project": "/abs/path"}`.
pub async fn move_session(
    path: web::Path<String>,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> ApiResult {
    let id = path.into_inner();
    let body: sessions::MoveBody = parse_body(&body)?;
    sessions::refuse_live(&state.board, &id, state.config.eviction_after)?;
    let store = state.store.clone();
    let moving = id.clone();
    let (record, distillations, messages) = blocking(move || {
        let (record, distillations) = sessions::move_to(&store, &moving, &body)?;
        let messages = store.session_log(&moving)?;
        Ok((record, distillations, messages))
    })
    .await?;
    let project = record.project.clone().unwrap_or_default();
    // The index holds each document's project: replace them (removal first, in the same
    // indexer mailbox, so the new documents are not deleted with the old ones).
    let mut ids: Vec<String> = messages
        .iter()
        .map(|m| format!("t:{}:{}", m.session_id, m.seq))
        .collect();
    ids.extend(distillations.iter().map(|d| d.doc_id()));
    remove_docs(&state, ids);
    let mut docs: Vec<lore_storage::IndexDoc> =
        messages.iter().map(|m| message_doc(m, &project)).collect();
    docs.extend(distillations.iter().map(distillation_doc));
    index_docs(&state, docs);
    ok(&json!({"ok": true, "session": sessions::session_row(&record)}))
}

/// `PATCH /api/v1/knowledge/{id}` with any of `title`, `content`, `confidence`, `category`.
pub async fn edit_knowledge(
    path: web::Path<String>,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> ApiResult {
    let id = path.into_inner();
    let body = parse_body(&body)?;
    let store = state.store.clone();
    let change = blocking(move || apply_edit(&store, &id, body)).await?;
    crate::knowledge::reindex(&state, std::slice::from_ref(&change));
    ok(&json!({"change": change.kind(), "entry": EntryRow::from(change.entry())}))
}

/// `POST /api/v1/knowledge/{id}/scope` with `{"project": "/abs/path" | null}`.
pub async fn scope_knowledge(
    path: web::Path<String>,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> ApiResult {
    let id = path.into_inner();
    let body = parse_body(&body)?;
    let store = state.store.clone();
    let change = blocking(move || apply_scope(&store, &id, body)).await?;
    crate::knowledge::reindex(&state, std::slice::from_ref(&change));
    ok(&json!({"change": change.kind(), "entry": EntryRow::from(change.entry())}))
}

/// `POST /api/v1/entities/merge` with `{"from": id, "into": id}`.
pub async fn merge_entities(body: web::Bytes, state: web::Data<AppState>) -> ApiResult {
    let body: entities::MergeBody = parse_body(&body)?;
    let store = state.store.clone();
    let merged = blocking(move || entities::merge(&store, &body)).await?;
    remove_docs(&state, vec![merged.removed_doc.clone()]);
    index_docs(&state, merged.docs.clone());
    ok(&json!({
        "ok": true,
        "into": merged.into.id,
        "removed": merged.removed,
        "repointed": merged.repointed,
        "name": merged.into.canonical_name,
    }))
}
