//! `lore-ui-seed DATA_DIR [--bench|--small] [--vault DIR]`: writes a seeded data directory for
//! the dashboard's benchmark and browser tests (see `lore_test_support::ui_seed`). The
//! directory must not be in use by a gateway.

use std::path::PathBuf;

use lore_test_support::ui_seed::{Plan, seed};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut data_dir: Option<PathBuf> = None;
    let mut plan = Plan::SMALL;
    let mut vault: Option<PathBuf> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bench" => plan = Plan::BENCH,
            "--small" => plan = Plan::SMALL,
            "--vault" => vault = args.next().map(PathBuf::from),
            "-h" | "--help" => {
                println!("usage: lore-ui-seed DATA_DIR [--bench|--small] [--vault DIR]");
                return Ok(());
            }
            other => data_dir = Some(PathBuf::from(other)),
        }
    }
    let Some(data_dir) = data_dir else {
        anyhow::bail!("usage: lore-ui-seed DATA_DIR [--bench|--small] [--vault DIR]");
    };
    let started = std::time::Instant::now();
    let seeded = seed(&data_dir, plan, vault.as_deref())?;
    println!(
        "seeded {}: {} sessions, {} messages, {} distillations, {} knowledge entries, {} entities in {:.1} s",
        data_dir.display(),
        seeded.sessions.len(),
        seeded.messages,
        seeded.distillations,
        seeded.knowledge.len(),
        seeded.entities.len(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "first session: {}",
        seeded.sessions.first().map_or("-", String::as_str)
    );
    println!(
        "first knowledge entry: {}",
        seeded.knowledge.first().map_or("-", String::as_str)
    );
    Ok(())
}
