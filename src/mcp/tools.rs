//! The MCP server handler: three tools (`write_card`, `read_card`, `list_cards`) over the card
//! book, and the instructions the model sees. There is deliberately no recall tool: cards reach
//! the model automatically through the gateway and the hook.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::Value;

use super::args::{self, ListCardsArgs, ReadCardArgs, WriteCardArgs, input_schema};
use super::book::{Book, failure};

/// What the model is told about this server.
pub const INSTRUCTIONS: &str = "These tools write and read the user's card book: short Markdown \
cards about people, events, places, things and slang, kept in a folder the user owns. You do not \
need to look cards up: a card is put into the conversation automatically whenever one of its \
keywords appears (there is no recall tool). So write a card when you learn something worth \
remembering, with write_card mode=\"create\", and add news to an existing card with \
mode=\"update_recent\". Choose keywords that are specific names (a person's name and nicknames, a \
project, a place), never generic words like \"work\" or \"meeting\", which would fire all the \
time. Use list_cards and read_card to check what exists before creating; read_card returns an \
mtime you can pass back as expected_mtime so you never overwrite someone else's edit.";

/// The `lore` MCP server.
#[derive(Debug, Clone)]
pub struct CardServer {
    book: Arc<Book>,
    tool_router: ToolRouter<Self>,
}

/// A tool answer: the JSON as text; `ok: false` answers are marked as errors.
fn answer(result: Result<Value, String>) -> CallToolResult {
    match result {
        Ok(value) => CallToolResult::success(vec![ContentBlock::text(value.to_string())]),
        Err(error) => CallToolResult::error(vec![ContentBlock::text(failure(&error).to_string())]),
    }
}

/// Runs a blocking book operation off the async workers.
async fn blocking(
    book: Arc<Book>,
    work: impl FnOnce(&Book) -> Result<Value, String> + Send + 'static,
) -> CallToolResult {
    let result = tokio::task::spawn_blocking(move || work(&book))
        .await
        .unwrap_or_else(|err| Err(format!("internal error: {err}")));
    answer(result)
}

#[tool_router]
impl CardServer {
    /// A server over `book`.
    pub fn new(book: Arc<Book>) -> Self {
        Self {
            book,
            tool_router: Self::tool_router(),
        }
    }

    /// Create a card or add news to one.
    #[tool(
        description = "Write to the user's card book. mode=\"create\": a new card; needs kind \
        (people, event, place, thing, slang, entry), key (file name), keywords (specific names \
        that make the card fire; required, never generic words) and the text as sections \
        {name: text} (people: who, stance, recent, impression; event: when, who, what, stance, \
        followup; place: where, relation, recent; thing: what, usage, recent; slang: meaning, \
        origin, usage) or as body (entry cards). Refuses a key that exists. \
        mode=\"update_recent\": appends one dated line (recent) to the recent section of an \
        existing card (event cards: followup), dropping the oldest lines beyond 600 characters; \
        pass expected_mtime from read_card to be sure nobody changed the card meanwhile. \
        Answers JSON {ok: true, ...} or {ok: false, error} where error says what to fix.",
        input_schema = input_schema::<WriteCardArgs>()
    )]
    async fn write_card(&self, arguments: JsonObject) -> CallToolResult {
        match args::parse::<WriteCardArgs>("write_card", arguments) {
            Ok(parsed) => blocking(self.book.clone(), move |book| book.write(parsed)).await,
            Err(error) => answer(Err(error)),
        }
    }

    /// Read one card.
    #[tool(
        description = "Read one card by key: its kind, title, keywords, aliases, refs, \
        sections and body (private sections are never shown), its path, and its mtime (pass it \
        as expected_mtime to write_card). Answers JSON {ok: true, ...} or {ok: false, error}.",
        input_schema = input_schema::<ReadCardArgs>(),
        annotations(read_only_hint = true)
    )]
    async fn read_card(&self, arguments: JsonObject) -> CallToolResult {
        match args::parse::<ReadCardArgs>("read_card", arguments) {
            Ok(parsed) => blocking(self.book.clone(), move |book| book.read(&parsed)).await,
            Err(error) => answer(Err(error)),
        }
    }

    /// List the cards.
    #[tool(
        description = "List the cards in the user's card book (optionally of one kind): key, \
        kind, title, keywords, inject, enabled. Use it before creating a card to avoid \
        duplicates. Answers JSON {ok: true, cards: [...]} or {ok: false, error}.",
        input_schema = input_schema::<ListCardsArgs>(),
        annotations(read_only_hint = true)
    )]
    async fn list_cards(&self, arguments: JsonObject) -> CallToolResult {
        match args::parse::<ListCardsArgs>("list_cards", arguments) {
            Ok(parsed) => blocking(self.book.clone(), move |book| book.list(&parsed)).await,
            Err(error) => answer(Err(error)),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CardServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("lore", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
