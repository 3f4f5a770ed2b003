//! Plain run options every layer may read: what the command line chose, without the
//! command-line parser. The CLI (`cli/`) parses its arguments into these values, listing each
//! enum's [`Choice::CHOICES`] as its possible values, so the spelling and help live here once.

use crate::contract::Contract;
pub use crate::contract::FailOn;

/// An option enum as the command line spells it.
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// Every value: the value, its name on the command line, a one-line help ("" for none).
    const CHOICES: &'static [(Self, &'static str, &'static str)];

    /// The command-line name of this value.
    fn name(self) -> &'static str {
        Self::CHOICES
            .iter()
            .find(|(v, _, _)| *v == self)
            .map_or("", |(_, name, _)| name)
    }

    /// The value named `name` (exact spelling).
    fn from_name(name: &str) -> Option<Self> {
        Self::CHOICES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(v, _, _)| *v)
    }
}

/// `--contract`: which contract(s) to check each CRD against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContractSelection {
    /// Whatever each CRD's `cluster.x-k8s.io/<contract>` labels declare.
    #[default]
    Declared,
    V1beta1,
    V1beta2,
    All,
}

impl Choice for ContractSelection {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            ContractSelection::Declared,
            "declared",
            "Whatever each CRD's `cluster.x-k8s.io/<contract>` labels declare",
        ),
        (ContractSelection::V1beta1, "v1beta1", ""),
        (ContractSelection::V1beta2, "v1beta2", ""),
        (ContractSelection::All, "all", ""),
    ];
}

impl ContractSelection {
    /// The contracts every CRD is checked against whatever its labels declare; `None` for
    /// [`ContractSelection::Declared`].
    pub fn forced(self) -> Option<Vec<Contract>> {
        match self {
            ContractSelection::Declared => None,
            ContractSelection::V1beta1 => Some(vec![Contract::V1Beta1]),
            ContractSelection::V1beta2 => Some(vec![Contract::V1Beta2]),
            ContractSelection::All => Some(Contract::ALL.to_vec()),
        }
    }
}

/// `-o`: the format written to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Table,
    Json,
    Yaml,
    Junit,
    Markdown,
    /// SARIF 2.1.0 (GitHub code scanning and other SARIF viewers).
    Sarif,
}

impl Choice for OutputFormat {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (OutputFormat::Table, "table", ""),
        (OutputFormat::Json, "json", ""),
        (OutputFormat::Yaml, "yaml", ""),
        (OutputFormat::Junit, "junit", ""),
        (OutputFormat::Markdown, "markdown", ""),
        (
            OutputFormat::Sarif,
            "sarif",
            "SARIF 2.1.0 (GitHub code scanning and other SARIF viewers)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T: Choice + std::fmt::Debug>() {
        for (v, name, _) in T::CHOICES {
            assert_eq!(v.name(), *name);
            assert_eq!(T::from_name(name), Some(*v), "{name}");
        }
        assert_eq!(T::from_name("no-such-value"), None);
    }

    #[test]
    fn every_choice_round_trips_by_name() {
        round_trips::<ContractSelection>();
        round_trips::<OutputFormat>();
        assert_eq!(ContractSelection::default().name(), "declared");
        assert_eq!(OutputFormat::default().name(), "table");
    }

    #[test]
    fn forced_contracts() {
        assert_eq!(ContractSelection::Declared.forced(), None);
        assert_eq!(
            ContractSelection::V1beta1.forced(),
            Some(vec![Contract::V1Beta1])
        );
        assert_eq!(
            ContractSelection::All.forced(),
            Some(Contract::ALL.to_vec())
        );
    }
}
