//! `lore knowledge list | show | export | import | forget`: long-term knowledge through the
//! running gateway, or on the files when none runs ([`backend`]). The CLI, never the gateway,
//! reads and writes `<project>/.lore.md`.

mod backend;
mod print;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::cli::{DataDirArg, KnowledgeCommand};
use crate::commands::data_dir;
use backend::{Backend, Imported};

/// The file `export` writes and `import` reads by default.
pub const LORE_MD: &str = ".lore.md";

/// Runs one `lore knowledge` command.
pub fn run(command: KnowledgeCommand, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let backend = Backend::for_data_dir(data_dir(data));
    match command {
        KnowledgeCommand::List {
            project,
            category,
            all_projects,
            json,
        } => {
            let project = if all_projects {
                None
            } else {
                Some(project_of(project)?.1)
            };
            let entries = backend.list(project.as_deref(), category.as_deref(), true)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&entries)?);
            } else {
                print::list(&entries, project.as_deref());
            }
        }
        KnowledgeCommand::Show { id, json } => {
            let entry = backend.show(&id)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&entry)?);
            } else {
                print::detail(&entry);
            }
        }
        KnowledgeCommand::Export { project, stdout } => {
            let (dir, project) = project_of(project)?;
            let text = backend.export(&project)?;
            if stdout {
                print!("{text}");
            } else {
                let path = dir.join(LORE_MD);
                write_atomic(&path, &text)?;
                let entries = text.lines().filter(|l| l.starts_with("<!-- lore:")).count();
                println!("wrote {} ({entries} entries)", path.display());
            }
        }
        KnowledgeCommand::Import { project, file } => {
            let (dir, project) = project_of(project)?;
            let path = file.unwrap_or_else(|| dir.join(LORE_MD));
            let text = read_text(&path)?;
            match backend.import(&project, &text)? {
                Imported::Done(summary) => {
                    print::summary(&summary, &path.display().to_string(), &project);
                }
                Imported::Problems(problems) => {
                    for (line, message) in &problems {
                        eprintln!("{}:{line}: {message}", path.display());
                    }
                    eprintln!(
                        "nothing was imported: fix the {} problem(s) above and run `lore knowledge import` again",
                        problems.len()
                    );
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
        KnowledgeCommand::Forget { id } => {
            let entry = backend.forget(&id)?;
            println!(
                "forgot {} ({}); `lore knowledge show {}` still shows its history",
                entry["id"].as_str().unwrap_or(""),
                entry["title"].as_str().unwrap_or(""),
                entry["id"].as_str().unwrap_or("")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The project directory and the string that names it: `--project` or the current directory,
/// canonicalized (absolute when it does not exist).
fn project_of(given: Option<PathBuf>) -> anyhow::Result<(PathBuf, String)> {
    let dir = match given {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let dir = dir
        .canonicalize()
        .or_else(|_| std::path::absolute(&dir))
        .with_context(|| format!("cannot resolve the project path {}", dir.display()))?;
    let Some(name) = dir.to_str() else {
        bail!(
            "the project path {} is not valid UTF-8; pass --project with another path",
            dir.display()
        );
    };
    Ok((dir.clone(), name.to_string()))
}

/// A `.lore.md` file's text, or a message that says how to get one.
fn read_text(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            anyhow::anyhow!(
                "{} does not exist; write it with `lore knowledge export`, or name the file to import",
                path.display()
            )
        } else {
            anyhow::anyhow!("cannot read {}: {err}", path.display())
        }
    })?;
    String::from_utf8(bytes).map_err(|err| {
        anyhow::anyhow!(
            "{} is not UTF-8 text (invalid byte at offset {}); save it as UTF-8 and import again",
            path.display(),
            err.utf8_error().valid_up_to()
        )
    })
}

/// Writes a file whole or not at all: a temporary file beside it, synced, then renamed over it.
fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let Some(dir) = path.parent().filter(|dir| dir.is_dir()) else {
        bail!(
            "cannot write {}: its directory does not exist; pass --project with an existing directory",
            path.display()
        );
    };
    let temporary = dir.join(format!("{LORE_MD}.{}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temporary);
        bail!("cannot write {}: {err}", path.display());
    }
    Ok(())
}
