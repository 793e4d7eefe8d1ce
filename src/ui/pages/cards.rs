//! The card editor page: cards by kind on the left, the form of the selected (or a new) card
//! built from the vault's section table on the right, the try box, import and export, the
//! recently surfaced cards and the health check. The writes are `cards.js` calling the API.

use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::answer;
use crate::dashboard::cards::detail::{CardDetail, field_names, show};
use crate::dashboard::cards::probe::{CheckReport, RECENT_LIMIT, Surfaced, check, recent};
use crate::dashboard::cards::{
    CardDesk, CardList, KindsView, kinds, list as card_list, parse_kind,
};
use crate::dashboard::error::{ApiError, blocking};
use crate::server::AppState;

/// One section of the form.
pub struct FieldRow {
    name: String,
    text: String,
    private: bool,
}

/// The editor page.
#[derive(Template)]
#[template(path = "cards.html")]
pub struct CardsPage {
    title: String,
    active: &'static str,
    kinds: KindsView,
    list: CardList,
    filter_kind: String,
    archived: bool,
    new_kind: String,
    selected_key: String,
    selected_kind: String,
    mode: &'static str,
    saved: bool,
    form_kind: String,
    form_key: String,
    form_mtime: String,
    form_path: String,
    problem: Option<String>,
    form_title: String,
    form_keywords: String,
    form_aliases: String,
    fields: Vec<FieldRow>,
    form_sec_all: String,
    form_sec_any: String,
    form_sec_not: String,
    form_sec_not_all: String,
    form_refs: String,
    form_priority: String,
    form_scan_depth: String,
    form_enabled: bool,
    form_inject: bool,
    form_extra: String,
    form_extra_fm: String,
    recent: Vec<Surfaced>,
    check: CheckReport,
}

/// `?kind=&archived=&keyword=&saved=`.
#[derive(Debug, Default, Deserialize)]
pub struct CardsQuery {
    /// The kind filter (or the kind of a new card).
    #[serde(default)]
    pub kind: Option<String>,
    /// `1`: the archive.
    #[serde(default)]
    pub archived: Option<String>,
    /// A keyword to start a new card with.
    #[serde(default)]
    pub keyword: Option<String>,
    /// `1` after a save.
    #[serde(default)]
    pub saved: Option<String>,
}

enum Open {
    Nothing,
    New(String, String),
    Card(Box<CardDetail>),
}

fn join(items: &[String]) -> String {
    items.join(", ")
}

fn build(
    desk: &CardDesk,
    store: &lore_storage::Store,
    query: &CardsQuery,
    open: Open,
) -> Result<CardsPage, ApiError> {
    let archived = matches!(query.archived.as_deref(), Some("1" | "true"));
    let filter_kind = query
        .kind
        .clone()
        .filter(|k| !k.is_empty())
        .unwrap_or_default();
    let kind = if filter_kind.is_empty() {
        None
    } else {
        Some(parse_kind(&filter_kind)?)
    };
    let kinds_view = kinds(desk);
    let config = desk.config();
    let mut page = CardsPage {
        title: "Cards".into(),
        active: "Cards",
        list: card_list(desk, kind, archived),
        kinds: kinds_view,
        new_kind: kind.map_or("people", |k| k.as_str()).to_string(),
        filter_kind,
        archived,
        selected_key: String::new(),
        selected_kind: String::new(),
        mode: "none",
        saved: query.saved.as_deref() == Some("1"),
        form_kind: String::new(),
        form_key: String::new(),
        form_mtime: String::new(),
        form_path: String::new(),
        problem: None,
        form_title: String::new(),
        form_keywords: String::new(),
        form_aliases: String::new(),
        fields: Vec::new(),
        form_sec_all: String::new(),
        form_sec_any: String::new(),
        form_sec_not: String::new(),
        form_sec_not_all: String::new(),
        form_refs: String::new(),
        form_priority: "0".into(),
        form_scan_depth: String::new(),
        form_enabled: true,
        form_inject: true,
        form_extra: String::new(),
        form_extra_fm: String::new(),
        recent: recent(store, RECENT_LIMIT)?,
        check: check(desk),
    };
    match open {
        Open::Nothing => {}
        Open::New(kind, keyword) => {
            let kind = parse_kind(&kind)?;
            let (names, private) = field_names(kind, &config);
            page.mode = "create";
            page.new_kind = kind.as_str().to_string();
            page.form_kind = kind.as_str().to_string();
            page.form_keywords = keyword;
            page.fields = names
                .into_iter()
                .map(|name| FieldRow {
                    private: private.contains(&name),
                    name,
                    text: String::new(),
                })
                .collect();
        }
        Open::Card(card) => {
            page.mode = "edit";
            page.selected_key = card.key.clone();
            page.selected_kind = card.kind.to_string();
            page.form_kind = card.kind.to_string();
            page.form_key = card.key.clone();
            page.form_mtime = card.mtime.clone().unwrap_or_default();
            page.form_path = card.path.clone();
            page.problem = card.problem.clone();
            page.form_title = card.title.clone();
            page.form_keywords = join(&card.keywords);
            page.form_aliases = join(&card.aliases);
            page.fields = card
                .fields
                .iter()
                .map(|(name, text)| FieldRow {
                    private: card.private_fields.contains(name),
                    name: name.clone(),
                    text: text.clone(),
                })
                .collect();
            page.form_sec_all = join(&card.secondary.all);
            page.form_sec_any = join(&card.secondary.any);
            page.form_sec_not = join(&card.secondary.not);
            page.form_sec_not_all = join(&card.secondary.not_all);
            page.form_refs = join(&card.refs);
            page.form_priority = card.priority.to_string();
            page.form_scan_depth = card.scan_depth.map(|d| d.to_string()).unwrap_or_default();
            page.form_enabled = card.enabled;
            page.form_inject = card.inject;
            page.form_extra = card.extra.clone();
            page.form_extra_fm = match &card.extra_fm {
                serde_json::Value::Object(map) if !map.is_empty() => {
                    serde_json::to_string_pretty(&card.extra_fm).unwrap_or_default()
                }
                _ => String::new(),
            };
            page.archived = card.archived;
            page.title = format!("Card {}", card.title);
        }
    }
    Ok(page)
}

async fn respond(
    state: web::Data<AppState>,
    query: CardsQuery,
    open: impl FnOnce(&CardDesk) -> Result<Open, ApiError> + Send + 'static,
) -> HttpResponse {
    let desk = match CardDesk::of(&state) {
        Ok(desk) => desk,
        Err(err) => return super::error_page(err),
    };
    let store = state.store.clone();
    answer(
        blocking(move || {
            let open = open(&desk)?;
            build(&desk, &store, &query, open)
        })
        .await,
    )
    .await
}

/// `GET /ui/cards?kind=&archived=`.
pub async fn list(query: web::Query<CardsQuery>, state: web::Data<AppState>) -> HttpResponse {
    respond(state, query.into_inner(), |_| Ok(Open::Nothing)).await
}

/// `GET /ui/cards/new?kind=&keyword=`.
pub async fn new(query: web::Query<CardsQuery>, state: web::Data<AppState>) -> HttpResponse {
    let query = query.into_inner();
    let kind = query
        .kind
        .clone()
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "people".into());
    let keyword = query.keyword.clone().unwrap_or_default();
    respond(state, query, move |_| Ok(Open::New(kind, keyword))).await
}

/// `GET /ui/cards/{kind}/{key}?archived=`.
pub async fn card(
    path: web::Path<(String, String)>,
    query: web::Query<CardsQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let (kind, key) = path.into_inner();
    let mut query = query.into_inner();
    let archived = matches!(query.archived.as_deref(), Some("1" | "true"));
    if query.kind.is_none() {
        query.kind = Some(kind.clone());
    }
    respond(state, query, move |desk| {
        let kind = parse_kind(&kind)?;
        Ok(Open::Card(Box::new(show(desk, kind, &key, archived)?)))
    })
    .await
}
