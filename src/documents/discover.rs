//! Which directories of an input are kustomize roots to render.
//!
//! The rule, for a directory given as input (first match wins):
//! 1. It holds a kustomization (`kustomization.yaml`, `kustomization.yml` or `Kustomization`):
//!    it is the one root.
//! 2. Its `default/` holds one (kubebuilder's `config/`): `default/` is the one root; the
//!    other kustomizations of `config/` (`crd/`, `rbac/`, `manager/`, `samples/`,
//!    `prometheus/` …) are its parts or optional extras, as kubebuilder lays them out.
//! 3. Below it (hidden directories and symbolic links not followed), kubebuilder `config/`
//!    trees (directories whose `default/` holds a kustomization): each renders its `default/`,
//!    as its own provider (a repository root with `bootstrap/kubeadm/config`,
//!    `controlplane/kubeadm/config`, … renders each). Other kustomizations are then not
//!    rendered (cluster-template kustomizations under `test/e2e`, docs examples).
//! 4. Else, below it, the kustomizations no other kustomization there uses (as a `resources`,
//!    `bases` or `components` directory): each is a root. Components and bases of another
//!    root are never rendered on their own.
//! 5. No kustomization anywhere: a plain directory, read file by file (as before).
//!
//! When roots are found (3, 4), the plain YAML files beside them (outside every kustomization
//! directory and `config/` tree, e.g. a repository's `metadata.yaml` or CI workflows) are not
//! read; a note names them (pass them as inputs to lint them).

use super::kustomize::{self, kustomization_file};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a directory input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirPlan {
    /// Render these roots (paths spelled from the input directory).
    Roots {
        roots: Vec<PathBuf>,
        /// YAML files found beside the roots that are not read.
        not_read: Vec<PathBuf>,
    },
    /// A plain directory: read its files.
    Plain,
}

/// Applies the discovery rule to `dir`.
pub fn plan_dir(dir: &Path) -> DirPlan {
    if kustomization_file(dir).is_some() {
        return DirPlan::Roots {
            roots: vec![dir.to_path_buf()],
            not_read: Vec::new(),
        };
    }
    let default = dir.join("default");
    if kustomization_file(&default).is_some() {
        return DirPlan::Roots {
            roots: vec![default],
            not_read: Vec::new(),
        };
    }
    let mut walk = Walk::default();
    walk.visit(dir);
    if walk.kustomizations.is_empty() {
        return DirPlan::Plain;
    }
    let roots: Vec<PathBuf> = if walk.configs.is_empty() {
        let used = walk.used_directories();
        walk.kustomizations
            .iter()
            .filter(|k| !used.contains(&kustomize::normalize(k)))
            .cloned()
            .collect()
    } else {
        walk.configs.iter().map(|c| c.join("default")).collect()
    };
    let trees: Vec<&PathBuf> = walk.kustomizations.iter().chain(&walk.configs).collect();
    let not_read = walk
        .yaml_files
        .iter()
        .filter(|f| !trees.iter().any(|t| f.starts_with(t)))
        .cloned()
        .collect();
    DirPlan::Roots { roots, not_read }
}

#[derive(Default)]
struct Walk {
    /// Directories holding a kustomization.
    kustomizations: Vec<PathBuf>,
    /// kubebuilder `config/` directories (no kustomization of their own; `default/` has one).
    configs: Vec<PathBuf>,
    yaml_files: Vec<PathBuf>,
}

impl Walk {
    fn visit(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut dirs = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Ok(ft) = entry.file_type() else { continue };
            let path = entry.path();
            if ft.is_dir() {
                if !name.starts_with('.') {
                    dirs.push(path);
                }
            } else if ft.is_file()
                && matches!(
                    Path::new(name).extension().and_then(|e| e.to_str()),
                    Some("yaml" | "yml" | "json")
                )
            {
                self.yaml_files.push(path);
            }
        }
        dirs.sort();
        if kustomization_file(dir).is_some() {
            self.kustomizations.push(dir.to_path_buf());
        } else if kustomization_file(&dir.join("default")).is_some() {
            self.configs.push(dir.to_path_buf());
        }
        for d in dirs {
            self.visit(&d);
        }
    }

    /// Directories a kustomization of the walk uses as a `resources`, `bases` or `components`
    /// entry (normalised).
    fn used_directories(&self) -> BTreeSet<PathBuf> {
        let mut used = BTreeSet::new();
        for k in &self.kustomizations {
            let Some(file) = kustomization_file(k) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            // An unreadable kustomization is kustomize's to report when it renders.
            let Ok(v) = serde_saphyr::from_str::<Value>(&text) else {
                continue;
            };
            for key in ["resources", "bases", "components"] {
                let Some(items) = v.get(key).and_then(Value::as_array) else {
                    continue;
                };
                for item in items.iter().filter_map(Value::as_str) {
                    if item.contains("://") || item.starts_with("git@") {
                        continue;
                    }
                    let p = kustomize::normalize(&k.join(item));
                    if p.is_dir() {
                        used.insert(p);
                    }
                }
            }
        }
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Roots, with nothing beside them left unread.
    fn roots_only(roots: Vec<PathBuf>) -> DirPlan {
        DirPlan::Roots {
            roots,
            not_read: vec![],
        }
    }

    fn touch(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_kustomization_or_a_kubebuilder_config_is_one_root() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(
            r,
            "config/default/kustomization.yaml",
            "resources: [../crd]\n",
        );
        touch(
            r,
            "config/crd/kustomization.yaml",
            "resources: [bases/a.yaml]\n",
        );
        touch(r, "config/crd/bases/a.yaml", "kind: A\n");
        assert_eq!(
            plan_dir(&r.join("config/crd")),
            roots_only(vec![r.join("config/crd")])
        );
        assert_eq!(
            plan_dir(&r.join("config")),
            roots_only(vec![r.join("config/default")])
        );
        assert_eq!(plan_dir(&r.join("config/crd/bases")), DirPlan::Plain);
    }

    #[test]
    fn a_repository_renders_each_config_tree_and_names_what_it_did_not_read() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in ["a/config", "b/x/config"] {
            touch(
                r,
                &format!("{p}/default/kustomization.yaml"),
                "resources: [../crd]\n",
            );
            touch(r, &format!("{p}/crd/kustomization.yaml"), "resources: []\n");
        }
        touch(r, "test/e2e/tmpl/kustomization.yaml", "resources: []\n");
        touch(r, "metadata.yaml", "kind: Metadata\n");
        touch(r, ".github/workflows/ci.yaml", "on: push\n");
        assert_eq!(
            plan_dir(r),
            DirPlan::Roots {
                roots: vec![r.join("a/config/default"), r.join("b/x/config/default")],
                not_read: vec![r.join("metadata.yaml")]
            }
        );
    }

    #[test]
    fn without_config_trees_the_unused_kustomizations_are_roots() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(
            r,
            "deploy/overlay/kustomization.yaml",
            "resources: [../base]\ncomponents: [../comp]\n",
        );
        touch(r, "deploy/base/kustomization.yaml", "resources: [a.yaml]\n");
        touch(r, "deploy/base/a.yaml", "kind: A\n");
        touch(r, "deploy/comp/kustomization.yaml", "kind: Component\n");
        touch(r, "deploy/other/kustomization.yaml", "resources: []\n");
        assert_eq!(
            plan_dir(r),
            roots_only(vec![r.join("deploy/other"), r.join("deploy/overlay")])
        );
    }
}
