//! The systemd user unit of the gateway (`~/.config/systemd/user/lore.service`).

use std::path::{Path, PathBuf};

use super::ServiceSpec;

/// Name of the unit.
pub const UNIT_NAME: &str = "lore.service";

/// Where the unit lives: `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
pub fn unit_path(home: &Path, xdg_config_home: Option<&Path>) -> PathBuf {
    xdg_config_home
        .map(Path::to_path_buf)
        .unwrap_or_else(|| home.join(".config"))
        .join("systemd/user")
        .join(UNIT_NAME)
}

/// Quotes a value for an `ExecStart=` or `Environment=` line: double quotes, with `\`, `"`,
/// `$` and `%` escaped as systemd reads them.
fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '$' => out.push_str("$$"),
            '%' => out.push_str("%%"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The unit file's text.
pub fn unit(spec: &ServiceSpec) -> String {
    let exe = quote(&spec.exe.display().to_string());
    let data = quote(&spec.data_dir.display().to_string());
    let log = spec.log_file.display().to_string().replace('%', "%%");
    let mut env = String::new();
    for (name, value) in &spec.env {
        env.push_str(&format!(
            "Environment={}\n",
            quote(&format!("{name}={value}"))
        ));
    }
    format!(
        "# Written by `lore service install`; `lore service uninstall` removes it.\n\
         [Unit]\n\
         Description=Lore memory gateway for AI coding harnesses\n\
         After=network.target\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={exe} start --data-dir {data}\n\
         Restart=on-failure\n\
         RestartSec=2\n\
         {env}\
         # Secrets (LORE_WORKER_API_KEY, LORE_GATEWAY_AUTH_TOKEN, …) go in this file, never here.\n\
         EnvironmentFile=-%h/.config/lore/service.env\n\
         StandardOutput=append:{log}\n\
         StandardError=append:{log}\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_as_systemd_reads_them() {
        assert_eq!(quote("/a b/lore"), "\"/a b/lore\"");
        assert_eq!(quote("50%$x\"\\"), "\"50%%$$x\\\"\\\\\"");
    }

    #[test]
    fn the_unit_starts_the_gateway_on_the_data_dir() {
        let spec = ServiceSpec {
            exe: PathBuf::from("/opt/lore bin/lore"),
            data_dir: PathBuf::from("/home/u/.local/share/lore"),
            log_file: PathBuf::from("/home/u/.local/share/lore/lore.log"),
            env: vec![("LORE_LISTEN_PORT".into(), "3300".into())],
        };
        let text = unit(&spec);
        assert!(text.contains(
            "ExecStart=\"/opt/lore bin/lore\" start --data-dir \"/home/u/.local/share/lore\"\n"
        ));
        assert!(text.contains("Environment=\"LORE_LISTEN_PORT=3300\"\n"));
        assert!(text.contains("StandardError=append:/home/u/.local/share/lore/lore.log\n"));
        assert!(text.contains("WantedBy=default.target"));
        assert_eq!(
            unit_path(Path::new("/home/u"), None),
            PathBuf::from("/home/u/.config/systemd/user/lore.service")
        );
    }
}
