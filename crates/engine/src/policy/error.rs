//! Why a Policy does not load: the file, then what in it ([`PlanError`] names the field or the
//! entry), with the cause as the error's source.

use std::fmt;
use std::sync::Arc;

use crate::policy::file::DecodeError;
use crate::registry::validate::EntryError;

/// Why a Policy file does not load; the message starts with the file.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PolicyError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("{file}: not UTF-8 text: {source}")]
    NotUtf8 {
        file: String,
        #[source]
        source: std::str::Utf8Error,
    },
    #[error("{file}: {source}")]
    Decode {
        file: String,
        #[source]
        source: DecodeError,
    },
    #[error("{file}: {source}")]
    Invalid {
        file: String,
        #[source]
        source: Box<PlanError>,
    },
}

impl PolicyError {
    /// The file it is about.
    pub fn file(&self) -> &str {
        match self {
            PolicyError::Read { file, .. }
            | PolicyError::NotUtf8 { file, .. }
            | PolicyError::Decode { file, .. }
            | PolicyError::Invalid { file, .. } => file,
        }
    }
}

/// An entry's place in the file: `predicates[3] ("MyPredicate")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryAt {
    pub list: &'static str,
    pub index: usize,
    pub name: String,
}

impl fmt::Display for EntryAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}] ({:?})", self.list, self.index, self.name)
    }
}

/// Why a decoded Policy is not a valid one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("kind: must be \"Policy\", found {found:?}")]
    Kind { found: Option<String> },
    #[error("apiVersion: must be \"v1\", found {found:?}")]
    ApiVersion { found: Option<String> },
    #[error("hardPodAffinitySymmetricWeight: must be in the range 0-100, found {0}")]
    HardPodAffinityWeight(i64),
    #[error("predicateOrdering: {0}")]
    Ordering(String),
    #[error("{list}[{index}].name: must not be empty")]
    EmptyName { list: &'static str, index: usize },
    #[error("{0}: listed twice")]
    ListedTwice(EntryAt),
    #[error("{at}.order: must be a positive integer, found {order}")]
    Order { at: EntryAt, order: i64 },
    #[error("{at}.weight: must be a positive integer, found {weight}")]
    Weight { at: EntryAt, weight: i64 },
    #[error("{0}.weight: the weights add up to more than the scores can hold")]
    WeightsOverflow(EntryAt),
    #[error("{at}: {source}")]
    Entry {
        at: EntryAt,
        #[source]
        source: EntryError,
    },
}
