//! Kubernetes' qualified names (apimachinery `validation.IsQualifiedName`): an optional DNS
//! subdomain prefix and `/`, then a name of at most 63 alphanumerics, `-`, `_` or `.`, starting and
//! ending with an alphanumeric. Label keys and resource names are qualified names.

/// Why `value` is not a qualified name, or `Ok`.
pub fn check(value: &str) -> Result<(), String> {
    let (prefix, name) = match value.split_once('/') {
        None => (None, value),
        Some((prefix, name)) => (Some(prefix), name),
    };
    if name.contains('/') {
        return Err(format!("{value:?} is not a qualified name: at most one '/' (prefix/name)"));
    }
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err(format!("{value:?}: prefix part must be non-empty"));
        }
        if prefix.len() > 253 {
            return Err(format!("{value:?}: prefix part must be no more than 253 characters"));
        }
        if !is_dns_subdomain(prefix) {
            return Err(format!(
                "{value:?}: prefix part must be a lowercase RFC 1123 subdomain (lower case alphanumerics, '-' or '.', \
                 starting and ending with an alphanumeric)"
            ));
        }
    }
    if name.is_empty() {
        return Err(format!("{value:?}: name part must be non-empty"));
    }
    if name.len() > 63 {
        return Err(format!("{value:?}: name part must be no more than 63 characters"));
    }
    let b = name.as_bytes();
    let inner_ok = b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !inner_ok || !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return Err(format!(
            "{value:?}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
             with an alphanumeric character"
        ));
    }
    Ok(())
}

/// RFC 1123 subdomain: dot-separated labels of lower case alphanumerics and inner `-`.
fn is_dns_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        let cases = [
            ("example.com/foo", true),
            ("foo", true),
            ("example.com", true),
            ("nvidia.com/gpu", true),
            ("a.b-c_d.e", true),
            ("Example.com/foo", false),
            ("example.com/", false),
            ("/foo", false),
            ("a/b/c", false),
            ("-foo", false),
            ("foo_", false),
            ("exa mple.com/foo", false),
            ("example..com/foo", false),
            ("", false),
        ];
        for (value, ok) in cases {
            assert_eq!(check(value).is_ok(), ok, "{value:?}: {:?}", check(value));
        }
        assert_eq!(check(&"a".repeat(63)), Ok(()));
        assert!(check(&"a".repeat(64)).unwrap_err().contains("no more than 63 characters"));
        assert!(check("example.com/").unwrap_err().contains("name part must be non-empty"));
    }
}
