//! `capi-conformance rbac [--static-only] [--group GROUP]... [--cluster-scoped RESOURCE.GROUP]...`:
//! prints the least-privilege ClusterRoles the tool needs on a cluster ([`crate::tool_rbac`]).

use crate::cli::RbacArgs;
use crate::tool_rbac::{cluster_roles, render};
use anyhow::Context;

/// Prints the YAML to stdout; exit 0, or an error (exit 2) for a bad `--group` or
/// `--cluster-scoped`.
pub fn run(args: &RbacArgs) -> anyhow::Result<i32> {
    let roles = cluster_roles(args.static_only, &args.groups, &args.cluster_scoped)?;
    let yaml = render(&roles).context("cannot render the RBAC as YAML")?;
    print!("{yaml}");
    Ok(0)
}
