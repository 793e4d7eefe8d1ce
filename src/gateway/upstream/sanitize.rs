//! Cleaning of server roots given by callers and operators, and the remote-mode allowlist.

/// Cleans a caller- or operator-supplied server root: control characters removed, at most 2,048
/// characters, http or https, no credentials, no query or fragment, trailing `/` and `/v1` removed.
pub fn sanitize_base(raw: &str) -> Result<String, String> {
    let cleaned: String = raw.chars().filter(|c| !c.is_control()).collect();
    let cleaned = cleaned.trim();
    if cleaned.len() > 2048 {
        return Err("longer than 2048 characters".into());
    }
    let (scheme, rest) = cleaned
        .split_once("://")
        .ok_or_else(|| format!("`{cleaned}` is not an absolute http(s) URL"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "scheme `{scheme}` is not allowed; use http or https"
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() {
        return Err("the URL has no host".into());
    }
    if authority.contains('@') {
        return Err("credentials in the URL are not allowed; send them as headers".into());
    }
    if rest.contains(['?', '#']) {
        return Err("a server root cannot carry a query or fragment".into());
    }
    let mut base = format!("{scheme}://{}", rest.trim_end_matches('/'));
    if let Some(stripped) = base.strip_suffix("/v1") {
        base = stripped.to_string();
    }
    Ok(base.trim_end_matches('/').to_string())
}

/// `scheme://host[:port]` of a sanitised base, with the default port made explicit.
pub(crate) fn origin_of(base: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("https", base));
    let authority = rest.split('/').next().unwrap_or("").to_ascii_lowercase();
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.chars().all(|c| c.is_ascii_digit()));
    if has_port {
        format!("{scheme}://{authority}")
    } else {
        let port = if scheme == "https" { 443 } else { 80 };
        format!("{scheme}://{authority}:{port}")
    }
}

/// False for an authority whose port is not a number from 1 to 65535.
fn valid_port(base: &str) -> bool {
    let authority = base.split_once("://").map_or(base, |(_, rest)| rest);
    let after_host = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((_, rest)) => rest,
            None => return false,
        },
        None => authority.split_once(':').map_or("", |(_, port)| port),
    };
    let port = after_host.strip_prefix(':').unwrap_or(after_host);
    port.is_empty() || port.parse::<u16>().is_ok_and(|port| port > 0)
}

/// Parses `LORE_CALLER_UPSTREAM_ALLOWLIST`: comma-separated https origins, nothing else.
pub(crate) fn parse_allowlist(raw: &str) -> Result<Vec<String>, String> {
    let mut origins = Vec::new();
    for entry in raw
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
    {
        let base = sanitize_base(entry)
            .map_err(|why| format!("LORE_CALLER_UPSTREAM_ALLOWLIST entry `{entry}`: {why}"))?;
        // An origin has no path at all: not even `/` or the `/v1` that `sanitize_base` strips.
        let path_part = entry
            .split_once("://")
            .map(|(_, rest)| rest.contains('/'))
            .unwrap_or(true);
        if !base.starts_with("https://") || path_part || entry.contains('*') || !valid_port(&base) {
            return Err(format!(
                "LORE_CALLER_UPSTREAM_ALLOWLIST entry `{entry}` must be a bare https origin like https://llm.example.com:8443"
            ));
        }
        let origin = origin_of(&base);
        if origins.contains(&origin) {
            return Err(format!(
                "LORE_CALLER_UPSTREAM_ALLOWLIST lists `{origin}` twice"
            ));
        }
        origins.push(origin);
    }
    Ok(origins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_takes_bare_https_origins_only() {
        assert_eq!(
            parse_allowlist("https://a.example, HTTPS://B.example:8443 ,https://[::1]:9443")
                .unwrap(),
            [
                "https://a.example:443",
                "https://b.example:8443",
                "https://[::1]:9443"
            ]
        );
        assert_eq!(
            parse_allowlist("").unwrap(),
            Vec::<String>::new(),
            "unset or empty: deny all"
        );
        for bad in [
            "https://a.example/v1",
            "https://a.example/",
            "https://a.example/path",
            "https://user:pass@a.example",
            "https://a.example?x=1",
            "https://a.example#f",
            "https://*.example",
            "*",
            "http://a.example",
            "a.example",
            "ftp://a.example",
            "https://",
            "https://a.example:notaport",
            "https://a.example:0",
            "https://a.example:70000",
        ] {
            let err = parse_allowlist(bad).unwrap_err();
            assert!(
                err.contains("LORE_CALLER_UPSTREAM_ALLOWLIST"),
                "{bad}: {err}"
            );
        }
        for duplicate in [
            "https://a.example,https://a.example",
            "https://a.example,https://A.EXAMPLE:443",
        ] {
            assert!(
                parse_allowlist(duplicate).unwrap_err().contains("twice"),
                "{duplicate}"
            );
        }
    }

    #[test]
    fn origins_compare_with_their_port() {
        assert_eq!(origin_of("https://a.example"), "https://a.example:443");
        assert_ne!(
            origin_of("https://a.example:8443"),
            origin_of("https://a.example")
        );
        assert_ne!(
            origin_of("http://a.example"),
            origin_of("https://a.example")
        );
        assert_ne!(
            origin_of("https://sub.a.example"),
            origin_of("https://a.example")
        );
    }
}
