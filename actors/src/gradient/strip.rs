//! The annotations that stand in for tool outputs at layers 2 and 3: what the model is told
//! about an output it no longer sees (its tool, size, whether it failed, the paths it named),
//! and about an output collapsed because a later one has the same content. Deterministic, so a
//! replaced output reads the same on every turn.

use crate::distiller::input::{has_error_line, paths_in};

/// Bytes of an output searched for paths.
const PATH_SCAN_BYTES: usize = 64 * 1024;
/// Paths named at most.
const MAX_PATHS: usize = 5;

/// `[output omitted — <tool>: <N> lines[, contained errors][, paths: …] — use recall for details]`
pub fn annotation(tool: &str, output: &str, is_error: bool) -> String {
    let lines = output.lines().count();
    let mut scan_end = output.len().min(PATH_SCAN_BYTES);
    while !output.is_char_boundary(scan_end) {
        scan_end -= 1;
    }
    let head = &output[..scan_end];
    let mut note = format!(
        "[output omitted — {}: {lines} line{}",
        if tool.is_empty() { "tool" } else { tool },
        if lines == 1 { "" } else { "s" }
    );
    if is_error || has_error_line(head) {
        note.push_str(", contained errors");
    }
    let paths = paths_in(head, MAX_PATHS);
    if !paths.is_empty() {
        note.push_str(", paths: ");
        note.push_str(&paths.join(", "));
    }
    note.push_str(" — use recall for details]");
    note
}

/// The stand-in for an output whose content a later output of the session repeats.
pub fn duplicate_annotation(tool: &str) -> String {
    format!(
        "[duplicate output — same content as later {} in this session — use recall for details]",
        if tool.is_empty() { "tool" } else { tool }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_say_size_errors_and_paths() {
        let output =
            "compiling src/main.rs\nerror[E0308]: mismatched types\n  --> src/lib.rs:4:5\n";
        assert_eq!(
            annotation("bash", output, false),
            "[output omitted — bash: 3 lines, contained errors, paths: src/main.rs, src/lib.rs — use recall for details]"
        );
        assert_eq!(
            annotation("read", "one line", false),
            "[output omitted — read: 1 line — use recall for details]"
        );
        assert!(annotation("", "x", true).contains("tool: 1 line, contained errors"));
        let many: String = (0..20).map(|i| format!("see a/f{i}.rs\n")).collect();
        assert_eq!(annotation("grep", &many, false).matches(".rs").count(), 5);
        assert_eq!(
            duplicate_annotation("read"),
            "[duplicate output — same content as later read in this session — use recall for details]"
        );
    }
}
