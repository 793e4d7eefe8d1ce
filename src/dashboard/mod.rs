//! The data of the dashboard: each page's view model, loaded from storage on the blocking pool
//! and serializable, so the HTML pages ([`crate::ui`]) and the JSON API ([`crate::ui_api`])
//! show the same thing. Also the management writes the pages make (edit, forget, move, merge,
//! delete, card writes), each with the rules of the crate that owns the data.
//!
//! - [`overview`], [`projects`], [`sessions`], [`knowledge`], [`entities`], [`search`],
//!   [`cards`], [`costs`], [`settings`]: one module per page; [`turns`]: a session's turns
//!   priced, with their context layers.
//! - [`error`]: [`error::ApiError`], the `{"error": code, "detail": message}` of every failure.
//! - [`paging`]: windows of long lists.

pub mod cards;
pub mod costs;
pub mod entities;
pub mod error;
pub mod knowledge;
pub mod overview;
pub mod paging;
pub mod projects;
pub mod search;
pub mod sessions;
pub mod settings;
pub mod turns;
