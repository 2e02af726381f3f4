//! Reading YAML (the Policy and cluster snapshot files) with serde-saphyr, into one-line errors
//! that say the line and column.

/// serde-saphyr's options for files an operator gives: its budgets sized for configuration files
/// are lifted where a 5,000-node cluster snapshot needs it (hundreds of MB of events and scalars);
/// the alias and anchor limits, which stop expansion bombs, stay.
pub fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = usize::MAX;
    budget.max_nodes = usize::MAX;
    budget.max_total_scalar_bytes = usize::MAX;
    budget.max_documents = usize::MAX;
    serde_saphyr::options! {
        budget: Some(budget),
        // One line per error: the caller puts the file and the object in front.
        with_snippet: false,
    }
}

/// The error on one line, worded for the person who wrote the file.
pub fn message(e: &serde_saphyr::Error) -> String {
    if let serde_saphyr::Error::MultipleDocuments { location, .. } = e {
        // serde-saphyr's own text names its functions to call instead.
        return format!(
            "holds more than one YAML document (a second one starts at line {} after `---`)",
            location.line()
        );
    }
    e.to_string().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}
