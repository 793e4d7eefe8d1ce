//! `lore cards check [--json]`: lint every card file; exit 1 when any problem exists.
//!
//! Every visible card file is read on its own: too large, unreadable and non-UTF-8 files are
//! reported here, every other file goes through [`check_card`] (frontmatter, keywords, generic
//! or short keys, title, body, private-only body, missing refs). `kinds.yaml` warnings are
//! problems too.

use std::collections::HashSet;
use std::path::Path;
use std::process::ExitCode;

use lore_proto::cards::check_card;
use lore_storage::Vault;
use lore_storage::vault::{CONFIG_FILE, MAX_CARD_BYTES};
use serde_json::json;

use super::relative;

/// One line of the report.
pub(crate) struct Finding {
    /// The file, relative to the vault (or `kinds.yaml`).
    pub(crate) path: String,
    /// Short code (`no_kw`, `generic_kw`, `unreadable`, …).
    pub(crate) code: &'static str,
    /// What is wrong and what to do.
    pub(crate) message: String,
}

/// Reads a card file, or says why it cannot be checked.
fn read_card(path: &Path) -> Result<String, Finding> {
    let finding = |code, message| Finding {
        path: String::new(),
        code,
        message,
    };
    let len = std::fs::metadata(path)
        .map_err(|err| finding("unreadable", format!("cannot read: {err}")))?
        .len();
    if len > MAX_CARD_BYTES {
        return Err(finding(
            "too_large",
            format!(
                "{len} bytes is larger than the {MAX_CARD_BYTES}-byte limit for a card; split it"
            ),
        ));
    }
    let bytes =
        std::fs::read(path).map_err(|err| finding("unreadable", format!("cannot read: {err}")))?;
    String::from_utf8(bytes).map_err(|_| {
        finding(
            "unreadable",
            "not UTF-8 text; save the file as UTF-8".into(),
        )
    })
}

/// Lints every card file of the vault at `root`: how many files there are and what is wrong.
/// Shared by `lore cards check` and `GET /api/v1/cards/check`.
pub(crate) fn findings(root: &Path) -> (usize, Vec<Finding>) {
    let vault = Vault::new(root);
    let (config, warnings, _) = vault.config();
    let files = vault.card_files();
    let known: HashSet<String> = files
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let mut findings: Vec<Finding> = warnings
        .into_iter()
        .map(|message| Finding {
            path: CONFIG_FILE.to_owned(),
            code: "config",
            message,
        })
        .collect();
    for path in &files {
        let shown = relative(root, path);
        let text = match read_card(path) {
            Ok(text) => text,
            Err(finding) => {
                findings.push(Finding {
                    path: shown,
                    ..finding
                });
                continue;
            }
        };
        let key = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = vault.kind_of(path, &config);
        let is_known = |name: &str| known.contains(name);
        for problem in check_card(&key, kind, &text, &config, &is_known) {
            findings.push(Finding {
                path: shown.clone(),
                code: problem.code.code(),
                message: problem.message,
            });
        }
    }
    (files.len(), findings)
}

/// Runs the lint.
pub(crate) fn run(root: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let (files, findings) = findings(root);
    let code = if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    if as_json {
        let problems: Vec<_> = findings
            .iter()
            .map(|f| json!({"path": f.path, "code": f.code, "message": f.message}))
            .collect();
        let out = json!({"cards": files, "problems": problems});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(code);
    }
    for f in &findings {
        println!("{}: {}: {}", f.path, f.code, f.message);
    }
    if findings.is_empty() {
        println!("{files} card files, no problems");
    } else {
        eprintln!("{} problem(s) in {} card files", findings.len(), files);
    }
    Ok(code)
}
