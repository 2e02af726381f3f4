//! The syntax of label keys and values, as apimachinery's `validation.IsQualifiedName` and
//! `validation.IsValidLabelValue` check it: what `labels.NewRequirement` refuses, and so what
//! makes a selector fail to convert (`NodeSelectorRequirementsAsSelector`,
//! `LabelSelectorAsSelector`).

/// The longest name part of a qualified name, and the longest label value.
const NAME_MAX: usize = 63;
/// The longest DNS subdomain (the optional prefix of a qualified name).
const DNS1123_SUBDOMAIN_MAX: usize = 253;

/// A label key: an optional DNS-subdomain prefix (at most 253 characters) and `/`, then a name of
/// at most 63 characters matching `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`.
pub fn is_qualified_name(key: &str) -> bool {
    qualified_name_error(key).is_none()
}

/// Why `value` is not a qualified name (label keys and resource names are), for error messages;
/// `None` when it is one.
pub fn qualified_name_error(value: &str) -> Option<String> {
    let (prefix, name) = match value.split_once('/') {
        None => (None, value),
        Some((prefix, name)) => (Some(prefix), name),
    };
    if name.contains('/') {
        return Some(format!("{value:?} is not a qualified name: at most one '/' (prefix/name)"));
    }
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Some(format!("{value:?}: prefix part must be non-empty"));
        }
        if !is_dns1123_subdomain(prefix) {
            return Some(format!(
                "{value:?}: prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters (lower case \
                 alphanumerics, '-' or '.', starting and ending with an alphanumeric)"
            ));
        }
    }
    if name.is_empty() {
        return Some(format!("{value:?}: name part must be non-empty"));
    }
    if name.len() > NAME_MAX {
        return Some(format!("{value:?}: name part must be no more than 63 characters"));
    }
    if !is_name_syntax(name) {
        return Some(format!(
            "{value:?}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
             with an alphanumeric character"
        ));
    }
    None
}

/// A label value: empty, or at most 63 characters matching `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`.
pub fn is_valid_label_value(value: &str) -> bool {
    value.len() <= NAME_MAX && (value.is_empty() || is_name_syntax(value))
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, for a non-empty string.
fn is_name_syntax(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    match b {
        [] => false,
        [only] => only.is_ascii_alphanumeric(),
        [first, middle @ .., last] => {
            first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() && middle.iter().all(inner)
        }
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, at most 253 characters.
fn is_dns1123_subdomain(s: &str) -> bool {
    let label = |l: &str| {
        let b = l.as_bytes();
        let lower_alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        match b {
            [] => false,
            [only] => lower_alnum(only),
            [first, middle @ .., last] => {
                lower_alnum(first) && lower_alnum(last) && middle.iter().all(|c| lower_alnum(c) || *c == b'-')
            }
        }
    };
    !s.is_empty() && s.len() <= DNS1123_SUBDOMAIN_MAX && s.split('.').all(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages name the part that is wrong (PodFitsResources' ignoredResources report them).
    #[test]
    fn qualified_name_errors_say_which_part() {
        for (value, ok) in [
            ("example.com/foo", true),
            ("nvidia.com/gpu", true),
            ("a.b-c_d.e", true),
            ("Example.com/foo", false),
            ("/foo", false),
            ("a/b/c", false),
            ("foo_", false),
            ("exa mple.com/foo", false),
            ("example..com/foo", false),
            ("", false),
        ] {
            assert_eq!(qualified_name_error(value).is_none(), ok, "{value:?}");
            assert_eq!(is_qualified_name(value), ok, "{value:?}");
        }
        assert!(qualified_name_error(&"a".repeat(64)).unwrap().contains("no more than 63 characters"));
        assert!(qualified_name_error("example.com/").unwrap().contains("name part must be non-empty"));
        assert!(qualified_name_error("/foo").unwrap().contains("prefix part must be non-empty"));
        assert!(qualified_name_error("a/b/c").unwrap().contains("at most one '/'"));
    }

    /// upstream: TestIsQualifiedName (apimachinery pkg/util/validation/validation_test.go): every
    /// success case and every error case.
    #[test]
    fn qualified_names() {
        let long_name = "a".repeat(63);
        let longest = format!("{}/{}", "a".repeat(253), "b".repeat(63));
        let good = [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "1234",
            "simple/simple",
            "now-with-dashes/simple",
            "now-with-dashes/now-with-dashes",
            "now.with.dots/simple",
            "now-with.dashes-and.dots/simple",
            "1-num.2-num/3-num",
            "1234/5678",
            "1.2.3.4/5678",
            "Uppercase_Is_OK_123",
            "example.com/Uppercase_Is_OK_123",
            "requests.storage-foo",
            &long_name,
            &longest,
        ];
        for key in good {
            assert!(is_qualified_name(key), "{key:?} is valid");
        }
        let too_long_name = "a".repeat(64);
        let too_long_prefix = format!("{}/abc", "a".repeat(254));
        let bad = [
            "nospecialchars%^=@",
            "cantendwithadash-",
            "-cantstartwithadash-",
            "only/one/slash",
            "Example.com/abc",
            "example_com/abc",
            "example.com/",
            "/simple",
            &too_long_name,
            &too_long_prefix,
            "",
        ];
        for key in bad {
            assert!(!is_qualified_name(key), "{key:?} is invalid");
        }
    }

    /// upstream: TestIsValidLabelValue (apimachinery pkg/util/validation/validation_test.go), and
    /// the value of TestPodFitsSelector's "Pod with an invalid value in Affinity term".
    #[test]
    fn label_values() {
        let longest = "a".repeat(63);
        for value in ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234", &longest, ""] {
            assert!(is_valid_label_value(value), "{value:?} is valid");
        }
        let too_long = "a".repeat(64);
        let bad = [
            "nospecialchars%^=@",
            "Tama-nui-te-rā.is.Māori.sun",
            "\\backslashes\\are\\bad",
            "-starts-with-dash",
            "ends-with-dash-",
            ".starts.with.dot",
            "ends.with.dot.",
            &too_long,
            "invalid value: ___@#$%^",
        ];
        for value in bad {
            assert!(!is_valid_label_value(value), "{value:?} is invalid");
        }
    }
}
