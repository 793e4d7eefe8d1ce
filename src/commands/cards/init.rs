//! `lore cards init [DIR]`: a vault with one example card per kind.
//!
//! Idempotent: a file that already exists is kept and reported, never overwritten.

use std::path::Path;
use std::process::ExitCode;

use lore_storage::Vault;

use super::examples::{EXAMPLES, TRY_SENTENCE};

/// Creates the vault at `root` and writes the examples that are missing.
pub(crate) fn run(root: &Path) -> anyhow::Result<ExitCode> {
    let vault = Vault::new(root);
    let (mut created, mut kept) = (0, 0);
    for (relative, text) in EXAMPLES {
        let relative = Path::new(relative);
        if root.join(relative).exists() {
            println!("kept     {}", relative.display());
            kept += 1;
            continue;
        }
        vault
            .write_file(relative, text)
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        println!("created  {}", relative.display());
        created += 1;
    }
    println!(
        "vault {}: {created} example cards created, {kept} kept",
        root.display()
    );
    println!(
        "try it:  lore cards try {TRY_SENTENCE:?} --vault {:?}",
        root.display().to_string()
    );
    Ok(ExitCode::SUCCESS)
}
