//! `write_card`: creating a card and appending to its recent section, with an mtime check so two
//! writers cannot overwrite each other.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lore_proto::cards::{Card, Kind, MAX_SCAN_DEPTH, RECENT_MAX_CHARS, Secondary, safe_key};
use serde_json::{Value, json};

use super::args::{Mode, WriteCardArgs};
use super::book::{Book, ToolError, mtime_string, ok, parse_kind};
use super::recent::{keep_newest, utc_date};

/// Trimmed, non-empty, de-duplicated entries.
fn clean(list: Option<Vec<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list.unwrap_or_default() {
        let item = item.trim().to_owned();
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The names of the arguments that are set, among `(name, is_set)` pairs.
fn set_fields(fields: &[(&str, bool)]) -> Vec<String> {
    fields
        .iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| format!("`{name}`"))
        .collect()
}

impl Book {
    /// `write_card` in either mode.
    pub fn write(&self, args: WriteCardArgs) -> Result<Value, ToolError> {
        match args.mode {
            Mode::Create => self.create(args),
            Mode::UpdateRecent => self.update_recent(args),
        }
    }

    fn create(&self, args: WriteCardArgs) -> Result<Value, ToolError> {
        let misplaced = set_fields(&[
            ("recent", args.recent.is_some()),
            ("expected_mtime", args.expected_mtime.is_some()),
        ]);
        if !misplaced.is_empty() {
            return Err(format!(
                "{} only apply to mode \"update_recent\"; for a new card put the text in \
                 `sections` (or `body`) and drop {}",
                misplaced.join(", "),
                misplaced.join(", ")
            ));
        }
        let kind_name = args.kind.as_deref().ok_or_else(|| {
            format!(
                "`kind` is required to create a card; use one of: {}",
                super::book::kind_names()
            )
        })?;
        let kind = parse_kind(kind_name)?;
        let key = safe_key(&args.key).map_err(|err| err.to_string())?;
        let keywords = clean(args.keywords);
        if keywords.is_empty() {
            return Err(
                "`keywords` is empty: a card without keywords can never fire. Add the \
                        specific names that should bring this card up (a person's name and \
                        nicknames, a project or place name), not generic words"
                    .into(),
            );
        }
        if let Some(depth) = args.scan_depth.filter(|d| *d > MAX_SCAN_DEPTH) {
            return Err(format!(
                "`scan_depth` {depth} is too large; use 0 to {MAX_SCAN_DEPTH}"
            ));
        }
        if args.priority.is_some_and(|p| !p.is_finite()) {
            return Err("`priority` must be a finite number".into());
        }
        let snapshot = self.snapshot();
        let config = &snapshot.config;
        if let Some(existing) = snapshot.get(&key) {
            return Err(format!(
                "a {} card with key `{key}` already exists ({}); use mode \"update_recent\" to add \
                 news to it, or pick another key",
                existing.card.kind,
                self.relative(&existing.path)
            ));
        }
        let path = self
            .vault
            .path_for(&key, kind, config)
            .map_err(|e| e.message)?;
        if path.exists() {
            return Err(format!(
                "{} already exists (it cannot be parsed as a card); pick another key",
                self.relative(&path)
            ));
        }
        let mut card = Card::new(&key, kind);
        card.title = args
            .title
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .unwrap_or(key.clone());
        card.keywords = keywords;
        card.aliases = clean(args.aliases);
        card.refs = clean(args.refs);
        card.scan_depth = args.scan_depth;
        card.priority = args.priority.unwrap_or(0.0);
        if let Some(s) = args.secondary {
            card.secondary = Secondary {
                all: clean(Some(s.all)),
                any: clean(Some(s.any)),
                not: clean(Some(s.not)),
                not_all: Vec::new(),
            };
        }
        let allowed = config.all_sections_for(kind);
        match (args.sections, args.body) {
            (Some(_), Some(_)) => {
                return Err("give either `sections` or `body`, not both".into());
            }
            (Some(sections), None) => {
                if allowed.is_empty() {
                    return Err(format!(
                        "{kind} cards have no sections; send the text as `body` instead"
                    ));
                }
                let unknown: Vec<&String> = sections
                    .keys()
                    .filter(|name| !allowed.contains(name))
                    .collect();
                if !unknown.is_empty() {
                    return Err(format!(
                        "unknown section(s) {unknown:?} for a {kind} card; its sections are: {}",
                        allowed.join(", ")
                    ));
                }
                card.sections = allowed
                    .iter()
                    .filter_map(|name| {
                        sections
                            .get(name)
                            .map(|t| (name.clone(), t.trim().to_owned()))
                    })
                    .filter(|(_, text)| !text.is_empty())
                    .collect();
                card.sync_body(config);
            }
            (None, Some(body)) => card.set_body(body.trim(), config),
            (None, None) => {}
        }
        let has_text = !card.head.trim().is_empty()
            || card.sections.iter().any(|(_, t)| !t.trim().is_empty())
            || !card.extra_sections.trim().is_empty();
        if !has_text {
            let shape = if allowed.is_empty() {
                "`body`".to_owned()
            } else {
                format!(
                    "`sections` (for {kind}: {})",
                    config.sections(kind).join(", ")
                )
            };
            return Err(format!(
                "the card has no text; write what should be remembered in {shape}"
            ));
        }
        let written = self
            .vault
            .write_card(&card, config, None)
            .map_err(|e| e.message)?;
        let modified = std::fs::metadata(&written).and_then(|m| m.modified()).ok();
        Ok(ok(json!({
            "mode": "create",
            "key": key,
            "kind": kind.as_str(),
            "path": self.relative(&written),
            "mtime": mtime_string(modified),
        })))
    }

    fn update_recent(&self, args: WriteCardArgs) -> Result<Value, ToolError> {
        let stray = set_fields(&[
            ("title", args.title.is_some()),
            ("keywords", args.keywords.is_some()),
            ("aliases", args.aliases.is_some()),
            ("refs", args.refs.is_some()),
            ("secondary", args.secondary.is_some()),
            ("priority", args.priority.is_some()),
            ("scan_depth", args.scan_depth.is_some()),
            ("sections", args.sections.is_some()),
            ("body", args.body.is_some()),
        ]);
        if !stray.is_empty() {
            return Err(format!(
                "mode \"update_recent\" only appends to the recent section; drop {} and send the \
                 news as `recent`",
                stray.join(", ")
            ));
        }
        let text = args.recent.as_deref().map(str::trim).unwrap_or_default();
        if text.is_empty() {
            return Err("`recent` is required: one short line about what just happened".into());
        }
        let snapshot = self.snapshot();
        let config = &snapshot.config;
        let entry = self.find(&snapshot, &args.key)?;
        let mut card = entry.card.clone();
        if let Some(kind) = args.kind.as_deref().map(parse_kind).transpose()?
            && kind != card.kind
        {
            return Err(format!(
                "card `{}` is a {} card, not {kind}; send kind \"{}\" or leave kind out",
                card.key, card.kind, card.kind
            ));
        }
        let Some(section) = config.recent_section(card.kind).map(str::to_owned) else {
            let with: Vec<String> = Kind::ALL
                .iter()
                .filter_map(|k| config.recent_section(*k).map(|s| format!("{k} ({s})")))
                .collect();
            return Err(format!(
                "{} cards have no recent section; only these kinds do: {}. To change this card, \
                 the user can edit {}",
                card.kind,
                with.join(", "),
                self.relative(&entry.path)
            ));
        };
        let expected = match args.expected_mtime.as_deref() {
            Some(raw) => {
                let nanos: u128 = raw.trim().parse().map_err(|_| {
                    format!("`expected_mtime` {raw:?} is not the mtime string read_card returned")
                })?;
                let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
                let sub = u32::try_from(nanos % 1_000_000_000).unwrap_or(0);
                let expected = UNIX_EPOCH + Duration::new(secs, sub);
                if entry.modified != Some(expected) {
                    return Err(format!(
                        "card `{}` changed since you read it (mtime now {}); call read_card \
                         again, check the recent section, then retry with the new mtime",
                        card.key,
                        mtime_string(entry.modified).unwrap_or_default()
                    ));
                }
                Some(expected)
            }
            None => entry.modified,
        };
        let line = format!(
            "{}: {}",
            utc_date(SystemTime::now()),
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        if line.chars().count() > RECENT_MAX_CHARS {
            return Err(format!(
                "`recent` is {} characters; keep it to one line under {} characters",
                text.chars().count(),
                RECENT_MAX_CHARS - 12
            ));
        }
        let mut lines: Vec<String> = card
            .section(&section)
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        lines.push(line);
        let kept = keep_newest(&lines, RECENT_MAX_CHARS);
        let dropped = lines.len() - kept.len();
        let new_text = kept.join("\n");
        match card.sections.iter_mut().find(|(name, _)| *name == section) {
            Some((_, existing)) => existing.clone_from(&new_text),
            None => card.sections.push((section.clone(), new_text.clone())),
        }
        card.sync_body(config);
        let written = self
            .vault
            .write_card(&card, config, expected)
            .map_err(|e| e.message)?;
        let modified = std::fs::metadata(&written).and_then(|m| m.modified()).ok();
        Ok(ok(json!({
            "mode": "update_recent",
            "key": card.key,
            "section": section,
            "text": new_text,
            "chars": new_text.chars().count(),
            "dropped_lines": dropped,
            "path": self.relative(&written),
            "mtime": mtime_string(modified),
        })))
    }
}
