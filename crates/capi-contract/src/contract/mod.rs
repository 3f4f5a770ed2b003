//! What CAPI says, without I/O: roles, contract versions, rule levels, CRD naming (flect port),
//! contract-label resolution and kube-aware version ordering.

mod role;

pub use role::Role;

use serde::{Deserialize, Serialize};
use std::fmt;

/// The two CAPI provider contract versions this tool understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Contract {
    #[serde(rename = "v1beta1")]
    V1Beta1,
    #[serde(rename = "v1beta2")]
    V1Beta2,
}

impl Contract {
    /// Every contract, oldest first.
    pub const ALL: [Contract; 2] = [Contract::V1Beta1, Contract::V1Beta2];

    /// `v1beta1` / `v1beta2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Contract::V1Beta1 => "v1beta1",
            Contract::V1Beta2 => "v1beta2",
        }
    }

    /// The CRD label CAPI reads for this contract, e.g. `cluster.x-k8s.io/v1beta2`.
    pub fn label_key(self) -> &'static str {
        match self {
            Contract::V1Beta1 => "cluster.x-k8s.io/v1beta1",
            Contract::V1Beta2 => "cluster.x-k8s.io/v1beta2",
        }
    }

    /// Short column tag used in reports: `b1` / `b2`.
    pub fn short(self) -> &'static str {
        match self {
            Contract::V1Beta1 => "b1",
            Contract::V1Beta2 => "b2",
        }
    }

    /// Parses `v1beta1` / `v1beta2` (also accepts `b1` / `b2`).
    pub fn parse(s: &str) -> Option<Contract> {
        match s {
            "v1beta1" | "b1" => Some(Contract::V1Beta1),
            "v1beta2" | "b2" => Some(Contract::V1Beta2),
            _ => None,
        }
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// RFC 2119 strength of a rule. Ordered from strongest to weakest so that `Must < Should < May`
/// and "at or above `--fail-on`" is `level <= fail_on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    Must,
    Should,
    May,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }

    /// True when a failure at this level must fail a run gated at `fail_on`.
    pub fn gates(self, fail_on: FailOn) -> bool {
        match fail_on {
            FailOn::Never => false,
            FailOn::Level(l) => self <= l,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `--fail-on must|should|may|never`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailOn {
    Level(Level),
    Never,
}

impl Default for FailOn {
    fn default() -> Self {
        FailOn::Level(Level::Must)
    }
}

impl FailOn {
    pub fn parse(s: &str) -> Option<FailOn> {
        match s.to_ascii_lowercase().as_str() {
            "must" => Some(FailOn::Level(Level::Must)),
            "should" => Some(FailOn::Level(Level::Should)),
            "may" => Some(FailOn::Level(Level::May)),
            "never" => Some(FailOn::Never),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Level(Level::Must) => "must",
            FailOn::Level(Level::Should) => "should",
            FailOn::Level(Level::May) => "may",
            FailOn::Never => "never",
        }
    }
}

pub mod flect;
pub mod labels;
/// Kube-aware version order (one implementation, shared with the embedded API server).
pub use kube_version_order as version;
