//! How the matrix is cut into readable tables (shared by the table, Markdown and HTML writers):
//! one group of tables per provider; each provider's target columns grouped by role and packed
//! into chunks of at most `max_columns`, with the baseline's columns of the same roles beside
//! them; rows are only the rules with a cell in the chunk.

use super::model::{Column, Matrix, Outcome, RuleResult};
use capi_contract::contract::{Contract, Role};
use std::collections::{BTreeMap, BTreeSet};

/// Cell outcome per (rule id, column), phases combined (see [`combine`]).
pub(crate) type CellIndex<'a> = BTreeMap<(&'a str, &'a Column), Outcome>;

/// How informative an outcome is when a rule has results in several phases for one column:
/// a failure anywhere shows, then inconclusive, waived, pass, and skip only when nothing ran.
fn weight(o: Outcome) -> u8 {
    match o {
        Outcome::Fail => 4,
        Outcome::Inconclusive => 3,
        Outcome::Waived => 2,
        Outcome::Pass => 1,
        Outcome::Skip => 0,
    }
}

/// The outcome shown for a cell with results `a` and `b`.
pub(crate) fn combine(a: Outcome, b: Outcome) -> Outcome {
    if weight(b) > weight(a) { b } else { a }
}

pub(crate) fn cell_index(m: &Matrix) -> CellIndex<'_> {
    let mut idx = CellIndex::new();
    for r in &m.results {
        idx.entry((r.rule_id.as_str(), &r.column))
            .and_modify(|o| *o = combine(*o, r.outcome))
            .or_insert(r.outcome);
    }
    idx
}

/// For a provider's columns, the characters available to its result columns.
pub(crate) type WidthBudget<'f> = dyn Fn(&[&Column]) -> usize + 'f;

/// One matrix table.
pub(crate) struct Chunk<'a> {
    /// Target columns first within each role group, then that role's baseline columns.
    pub columns: Vec<&'a Column>,
    pub rows: Vec<Row<'a>>,
}

pub(crate) struct Row<'a> {
    pub rule_id: &'a str,
    pub title: &'a str,
    /// `MUST`, `COND-SHOULD`, or `b1 SHOULD / b2 MAY` when the contracts in the row disagree.
    pub level: String,
    /// One entry per chunk column; `None` when the rule does not apply to that column.
    pub cells: Vec<Option<Outcome>>,
}

/// All tables of one provider.
pub(crate) struct ProviderTables<'a> {
    pub provider: &'a str,
    pub baseline: bool,
    pub target_columns: usize,
    pub chunks: Vec<Chunk<'a>>,
}

/// Cuts the matrix into per-provider tables. When the matrix has only baseline columns, the
/// baseline is shown as its own provider.
///
/// `budget`, when given, returns for a provider's columns the characters available to its
/// result columns; chunks then also stay within that width (each column taking
/// [`column_width`] + 3).
pub(crate) fn provider_tables<'a>(
    m: &'a Matrix,
    idx: &CellIndex<'a>,
    max_columns: usize,
    budget: Option<&WidthBudget<'_>>,
) -> Vec<ProviderTables<'a>> {
    let max_columns = max_columns.max(1);
    let any_target = m.columns.iter().any(|c| !c.baseline);
    let baseline_cols: Vec<&Column> = m.columns.iter().filter(|c| c.baseline).collect();
    let ids = rule_ids(m);
    let providers: BTreeSet<(&str, bool)> = m
        .columns
        .iter()
        .filter(|c| !any_target || !c.baseline)
        .map(|c| (c.provider.as_str(), c.baseline))
        .collect();
    providers
        .into_iter()
        .map(|(provider, baseline)| {
            let cols: Vec<&Column> = m
                .columns
                .iter()
                .filter(|c| c.provider == provider && c.baseline == baseline)
                .collect();
            let with_baseline = !baseline;
            let width = budget.map(|f| {
                let mut all = cols.clone();
                if with_baseline {
                    all.extend(baseline_cols.iter().copied());
                }
                f(&all)
            });
            let baseline_width = |role| -> usize {
                if with_baseline {
                    baseline_cols
                        .iter()
                        .filter(|b| b.role == role)
                        .map(|b| column_width(b) + 3)
                        .sum()
                } else {
                    0
                }
            };
            let chunks = pack(&cols, max_columns, width, &baseline_width)
                .into_iter()
                .map(|targets| {
                    let mut columns = Vec::new();
                    let mut i = 0;
                    while i < targets.len() {
                        let role = targets[i].role;
                        while i < targets.len() && targets[i].role == role {
                            columns.push(targets[i]);
                            i += 1;
                        }
                        if with_baseline {
                            columns.extend(baseline_cols.iter().filter(|b| b.role == role));
                        }
                    }
                    let rows = rows_for(m, idx, &ids, &columns);
                    Chunk { columns, rows }
                })
                .collect();
            ProviderTables {
                provider,
                baseline,
                target_columns: cols.len(),
                chunks,
            }
        })
        .collect()
}

/// Packs columns (already sorted by role) into chunks of at most `max` columns and, when given,
/// at most `width` characters (`baseline_width(role)`: what that role's baseline columns add),
/// starting a new chunk rather than splitting a role group that fits in a chunk of its own.
/// A chunk always takes at least one column.
fn pack<'a>(
    cols: &[&'a Column],
    max: usize,
    width: Option<usize>,
    baseline_width: &dyn Fn(Role) -> usize,
) -> Vec<Vec<&'a Column>> {
    let mut groups: Vec<Vec<&Column>> = Vec::new();
    for c in cols {
        match groups.last_mut() {
            Some(g) if g[0].role == c.role => g.push(c),
            _ => groups.push(vec![c]),
        }
    }
    /// A chunk (or piece of one) being filled: its columns, width, and roles.
    struct Acc<'c> {
        cols: Vec<&'c Column>,
        width: usize,
        roles: BTreeSet<Role>,
    }
    let fits = |count: usize, w: usize| count <= max && width.is_none_or(|limit| w <= limit);
    let mut chunks: Vec<Acc<'a>> = Vec::new();
    for g in groups {
        let role = g[0].role;
        // Split the group itself into pieces that fit on their own.
        let mut pieces: Vec<Acc<'a>> = Vec::new();
        for c in g {
            let cw = column_width(c) + 3;
            match pieces.last_mut() {
                Some(p) if fits(p.cols.len() + 1, p.width + cw) => {
                    p.cols.push(c);
                    p.width += cw;
                }
                _ => pieces.push(Acc {
                    cols: vec![c],
                    width: cw + baseline_width(role),
                    roles: BTreeSet::from([role]),
                }),
            }
        }
        for piece in pieces {
            let shared = |ch: &Acc<'_>| {
                if ch.roles.contains(&role) {
                    baseline_width(role)
                } else {
                    0
                }
            };
            match chunks.last_mut() {
                Some(ch)
                    if fits(
                        ch.cols.len() + piece.cols.len(),
                        ch.width + piece.width - shared(ch),
                    ) =>
                {
                    ch.width += piece.width - shared(ch);
                    ch.cols.extend(piece.cols);
                    ch.roles.insert(role);
                }
                _ => chunks.push(piece),
            }
        }
    }
    chunks.into_iter().map(|a| a.cols).collect::<Vec<_>>()
}

fn rows_for<'a>(
    m: &'a Matrix,
    idx: &CellIndex<'a>,
    ids: &[&'a str],
    columns: &[&'a Column],
) -> Vec<Row<'a>> {
    let mut rows = Vec::new();
    for &rule_id in ids {
        let cells: Vec<Option<Outcome>> = columns
            .iter()
            .map(|c| idx.get(&(rule_id, *c)).copied())
            .collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        let contracts: Vec<Option<Contract>> = columns
            .iter()
            .zip(&cells)
            .filter(|(_, o)| o.is_some())
            .map(|(c, _)| c.contract)
            .collect();
        rows.push(Row {
            rule_id,
            title: m.rule(rule_id).map_or("", |r| r.title.as_str()),
            level: level_label(m, rule_id, &contracts),
            cells,
        });
    }
    rows
}

/// Rule ids in catalog order, then ids only found in results (sorted).
pub(crate) fn rule_ids(m: &Matrix) -> Vec<&str> {
    let mut ids: Vec<&str> = m.rules.iter().map(|r| r.id.as_str()).collect();
    let known: BTreeSet<&str> = ids.iter().copied().collect();
    let extra: BTreeSet<&str> = m
        .results
        .iter()
        .map(|r| r.rule_id.as_str())
        .filter(|id| !known.contains(id))
        .collect();
    ids.extend(extra);
    ids
}

/// Level label of a rule across the given contracts (`None` = contract-independent column).
pub(crate) fn level_label(m: &Matrix, rule_id: &str, contracts: &[Option<Contract>]) -> String {
    let Some(rule) = m.rule(rule_id) else {
        return m
            .results
            .iter()
            .find(|r| r.rule_id == rule_id)
            .map_or_else(String::new, |r| r.level.as_str().to_string());
    };
    let per: BTreeMap<Option<Contract>, String> = contracts
        .iter()
        .map(|c| (*c, rule.level_label(*c)))
        .collect();
    let distinct: BTreeSet<&String> = per.values().collect();
    match distinct.len() {
        0 => rule.level_label(None),
        1 => per.values().next().cloned().unwrap_or_default(),
        _ => per
            .iter()
            .map(|(c, l)| match c {
                Some(c) => format!("{} {l}", c.short()),
                None => l.clone(),
            })
            .collect::<Vec<_>>()
            .join(" / "),
    }
}

/// The failed results, in matrix order (sorted by rule: a rule's failures are adjacent).
pub(crate) fn failures(m: &Matrix) -> Vec<&RuleResult> {
    m.results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .collect()
}

/// Why a failure does not gate the exit code, if it does not: every writer says so beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoGate {
    /// A baseline (mock) column.
    Baseline,
    /// Its level is below `--fail-on`.
    BelowFailOn,
}

/// [`NoGate`] for one result; `None` when a failure of it gates.
pub(crate) fn no_gate(m: &Matrix, r: &RuleResult) -> Option<NoGate> {
    if r.column.baseline {
        Some(NoGate::Baseline)
    } else if r.level.gates(m.context.fail_on) {
        None
    } else {
        Some(NoGate::BelowFailOn)
    }
}

/// Level label for one result (its own contract).
pub(crate) fn result_level_label(m: &Matrix, r: &RuleResult) -> String {
    m.rule(&r.rule_id).map_or_else(
        || r.level.as_str().to_string(),
        |rule| rule.level_label(r.column.contract),
    )
}

/// Header of a column as two lines: the kind (`(provider)` for provider-wide rules) and the
/// contract tag, `base` marking the baseline: (`AWSMachine`, `b2`), (`MockMachine`, `b2 base`).
pub(crate) fn column_header(c: &Column) -> (String, String) {
    let kind = if c.kind == "*" {
        "(provider)"
    } else {
        c.kind.as_str()
    };
    let mut tag = c
        .contract
        .map_or_else(|| "-".to_string(), |ct| ct.short().to_string());
    if c.baseline {
        tag.push_str(" base");
    }
    (kind.to_string(), tag)
}

/// Characters a column needs in the table (its widest header line or cell label).
pub(crate) fn column_width(c: &Column) -> usize {
    let (kind, tag) = column_header(c);
    kind.chars().count().max(tag.chars().count()).max(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(kind: &str, role: Role) -> Column {
        Column {
            provider: "p".into(),
            kind: kind.into(),
            role,
            contract: Some(Contract::V1Beta2),
            baseline: false,
        }
    }

    #[test]
    fn pack_keeps_role_groups_together_and_bounds_chunk_width() {
        let cols = [
            col("A", Role::InfraCluster),
            col("B", Role::InfraMachine),
            col("C", Role::InfraMachine),
            col("D", Role::InfraMachine),
            col("E", Role::InfraMachineTemplate),
        ];
        let refs: Vec<&Column> = cols.iter().collect();
        let none = |_: Role| 0;
        let chunks = pack(&refs, 3, None, &none);
        let kinds: Vec<Vec<&str>> = chunks
            .iter()
            .map(|c| c.iter().map(|c| c.kind.as_str()).collect())
            .collect();
        assert_eq!(kinds, vec![vec!["A"], vec!["B", "C", "D"], vec!["E"]]);
        let chunks = pack(&refs, 2, None, &none);
        assert!(chunks.iter().all(|c| c.len() <= 2));
        assert_eq!(chunks.iter().map(Vec::len).sum::<usize>(), 5);
        // Width budget: each column costs 8 + 3; 25 characters hold two.
        let chunks = pack(&refs, 8, Some(25), &none);
        let kinds: Vec<Vec<&str>> = chunks
            .iter()
            .map(|c| c.iter().map(|c| c.kind.as_str()).collect())
            .collect();
        assert_eq!(kinds, vec![vec!["A"], vec!["B", "C"], vec!["D", "E"]]);
        // A column wider than the budget still gets a chunk of its own.
        let chunks = pack(&refs, 8, Some(1), &none);
        assert_eq!(chunks.len(), 5);
    }

    #[test]
    fn combine_prefers_the_most_informative_outcome() {
        assert_eq!(combine(Outcome::Skip, Outcome::Pass), Outcome::Pass);
        assert_eq!(combine(Outcome::Pass, Outcome::Fail), Outcome::Fail);
        assert_eq!(
            combine(Outcome::Inconclusive, Outcome::Waived),
            Outcome::Inconclusive
        );
    }
}
