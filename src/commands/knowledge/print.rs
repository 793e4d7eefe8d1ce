//! The human output of `lore knowledge`: a compact list (id prefix, category, confidence,
//! title), an entry with all its fields and history, and an import's summary.

use lore_storage::memory::day_of;
use serde_json::Value;

/// The list of entries, one line each. `project` is the listed project (`None` for every
/// project); entries of another project or of every project say so.
pub fn list(entries: &[Value], project: Option<&str>) {
    if entries.is_empty() {
        match project {
            Some(project) => println!(
                "no knowledge for {project} yet; the curator learns it from conversations, or write it in .lore.md and run `lore knowledge import`"
            ),
            None => println!("no knowledge yet"),
        }
        return;
    }
    let ids: Vec<&str> = entries.iter().map(|e| str_of(e, "id")).collect();
    let short = short_ids(&ids);
    let width = short.iter().map(String::len).max().unwrap_or(8);
    for (entry, id) in entries.iter().zip(&short) {
        let owner = match entry["project"].as_str() {
            None => "  [every project]".to_string(),
            Some(own) if Some(own) != project => format!("  [{own}]"),
            Some(_) => String::new(),
        };
        println!(
            "{id:<width$}  {:<12}  {:.2}  {}{owner}",
            str_of(entry, "category"),
            entry["confidence"].as_f64().unwrap_or(0.0),
            str_of(entry, "title"),
        );
    }
    println!(
        "{} entr{}; `lore knowledge show ID` shows one",
        entries.len(),
        if entries.len() == 1 { "y" } else { "ies" }
    );
}

/// One entry with every field, then its earlier versions, oldest first.
pub fn detail(entry: &Value) {
    println!("{}", str_of(entry, "title"));
    println!("  id:          {}", str_of(entry, "id"));
    println!("  category:    {}", str_of(entry, "category"));
    println!(
        "  project:     {}",
        entry["project"].as_str().unwrap_or("(every project)")
    );
    println!(
        "  confidence:  {:.2}",
        entry["confidence"].as_f64().unwrap_or(0.0)
    );
    println!(
        "  version:     {} (by {}, {})",
        entry["version"],
        str_of(entry, "updated_by"),
        when(&entry["updated_at_ms"])
    );
    println!("  created:     {}", when(&entry["created_at_ms"]));
    if let Some(session) = entry["source_session"].as_str() {
        println!("  learnt in:   session {session}");
    }
    if entry["deleted"].as_bool() == Some(true) {
        println!("  status:      forgotten");
    }
    println!();
    println!("{}", indent(str_of(entry, "content"), "  "));
    let history = entry["history"].as_array().cloned().unwrap_or_default();
    if history.is_empty() {
        return;
    }
    println!();
    println!("history (oldest first):");
    for old in &history {
        println!(
            "  v{} by {}, {} [{} {:.2}] {}",
            old["version"],
            str_of(old, "updated_by"),
            when(&old["updated_at_ms"]),
            str_of(old, "category"),
            old["confidence"].as_f64().unwrap_or(0.0),
            str_of(old, "title"),
        );
        println!("{}", indent(str_of(old, "content"), "      "));
    }
}

/// What an import did.
pub fn summary(summary: &Value, file: &str, project: &str) {
    let count = |key: &str| summary[key].as_u64().unwrap_or(0);
    println!(
        "imported {file} into {project}: {} created, {} updated, {} forgotten, {} unchanged",
        count("created"),
        count("updated"),
        count("deleted"),
        count("unchanged")
    );
    let changes = summary["changes"].as_array().cloned().unwrap_or_default();
    let changed: Vec<&Value> = changes
        .iter()
        .filter(|c| c["change"].as_str() != Some("unchanged"))
        .collect();
    let ids: Vec<&str> = changed.iter().map(|c| str_of(c, "id")).collect();
    for (change, id) in changed.iter().zip(short_ids(&ids)) {
        println!(
            "  {:<9}  {id}  {}",
            str_of(change, "change"),
            str_of(change, "title")
        );
    }
}

/// The shortest prefix of each id, at least 8 characters, that no other listed id shares.
pub fn short_ids(ids: &[&str]) -> Vec<String> {
    ids.iter()
        .map(|id| {
            let mut n = 8.min(id.len());
            while n < id.len()
                && (!id.is_char_boundary(n)
                    || ids
                        .iter()
                        .any(|other| other != id && other.starts_with(&id[..n])))
            {
                n += 1;
            }
            id[..n].to_string()
        })
        .collect()
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or("")
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|line| format!("{by}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A time in ms since the epoch as `YYYY-MM-DD HH:MM UTC`.
fn when(ms: &Value) -> String {
    let ms = ms.as_u64().unwrap_or(0);
    let minutes = ms / 60_000 % (24 * 60);
    format!("{} {:02}:{:02} UTC", day_of(ms), minutes / 60, minutes % 60)
}

#[cfg(test)]
mod tests {
    use super::short_ids;

    #[test]
    fn short_ids_grow_until_unique() {
        let ids = [
            "0190f1c2-aaaa-7000-8000-000000000001",
            "0190f1c2-aaaa-7000-8000-000000000002",
            "0190f1c3-bbbb-7000-8000-000000000003",
        ];
        assert_eq!(
            short_ids(&ids),
            [
                "0190f1c2-aaaa-7000-8000-000000000001",
                "0190f1c2-aaaa-7000-8000-000000000002",
                "0190f1c3"
            ]
        );
        assert_eq!(short_ids(&["abc"]), ["abc"]);
    }
}
