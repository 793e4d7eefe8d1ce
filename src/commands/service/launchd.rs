//! The launchd agent of the gateway (`~/Library/LaunchAgents/dev.lore.gateway.plist`).

use std::path::{Path, PathBuf};

use super::ServiceSpec;

/// Label of the agent.
pub const LABEL: &str = "dev.lore.gateway";

/// Where the agent's property list lives.
pub fn plist_path(home: &Path) -> PathBuf {
    home.join("Library/LaunchAgents")
        .join(format!("{LABEL}.plist"))
}

/// Escapes text for an XML element.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn string(text: &str) -> String {
    format!("<string>{}</string>", xml(text))
}

/// The property list's text.
pub fn plist(spec: &ServiceSpec) -> String {
    let args = [
        spec.exe.display().to_string(),
        "start".to_string(),
        "--data-dir".to_string(),
        spec.data_dir.display().to_string(),
    ]
    .iter()
    .map(|arg| format!("    {}\n", string(arg)))
    .collect::<String>();
    let env = spec
        .env
        .iter()
        .map(|(name, value)| format!("    <key>{}</key>{}\n", xml(name), string(value)))
        .collect::<String>();
    let log = string(&spec.log_file.display().to_string());
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- Written by `lore service install`; `lore service uninstall` removes it. -->\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \x20 <key>Label</key>{label}\n\
         \x20 <key>ProgramArguments</key>\n\
         \x20 <array>\n{args}  </array>\n\
         \x20 <key>EnvironmentVariables</key>\n\
         \x20 <dict>\n{env}  </dict>\n\
         \x20 <key>RunAtLoad</key><true/>\n\
         \x20 <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>\n\
         \x20 <key>StandardOutPath</key>{log}\n\
         \x20 <key>StandardErrorPath</key>{log}\n\
         </dict>\n\
         </plist>\n",
        label = string(LABEL),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_runs_the_gateway_and_escapes_paths() {
        let spec = ServiceSpec {
            exe: PathBuf::from("/Applications/R&D/lore"),
            data_dir: PathBuf::from("/Users/u/Library/Application Support/lore"),
            log_file: PathBuf::from("/Users/u/lore.log"),
            env: vec![("LORE_LOG".into(), "info".into())],
        };
        let text = plist(&spec);
        assert!(text.contains("<string>/Applications/R&amp;D/lore</string>"));
        assert!(text.contains("<string>--data-dir</string>"));
        assert!(text.contains("<key>LORE_LOG</key><string>info</string>"));
        assert!(text.contains("<key>RunAtLoad</key><true/>"));
        assert_eq!(
            text.matches("<dict>").count(),
            text.matches("</dict>").count()
        );
        assert_eq!(
            plist_path(Path::new("/Users/u")),
            PathBuf::from("/Users/u/Library/LaunchAgents/dev.lore.gateway.plist")
        );
    }
}
