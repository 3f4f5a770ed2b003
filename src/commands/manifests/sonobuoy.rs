//! `manifests sonobuoy`: a Sonobuoy plugin definition (`sonobuoy run --plugin <file>`) following
//! Sonobuoy's plugin contract: `sonobuoy-config` with `driver: Job`, the plugin's name and
//! `result-format: junit`; `spec`, the container Sonobuoy runs beside its worker, with the
//! results volume at [`RESULTS_DIR`]. `check --sonobuoy` (on by itself when Sonobuoy's
//! `SONOBUOY_RESULTS_DIR` is set) writes its JUnit there and then the `done` file naming it,
//! which the worker waits for before it sends the file to the aggregator.

use super::{IMAGE_BINARY, ManifestsError, check_args, image, yaml};
use crate::cli::SonobuoyManifestsArgs;
use k8s_openapi::api::core::v1::{Capabilities, Container, SecurityContext, VolumeMount};
use serde::Serialize;

/// Sonobuoy's results directory in the plugin container (its default `SONOBUOY_RESULTS_DIR`).
pub const RESULTS_DIR: &str = "/tmp/sonobuoy/results";
/// The plugin's name in Sonobuoy (`sonobuoy status`, `sonobuoy results`).
pub const PLUGIN_NAME: &str = "capi-conformance";

/// The plugin definition: Sonobuoy's `manifest.Manifest` fields used here.
#[derive(Debug, Serialize)]
pub struct Plugin {
    #[serde(rename = "sonobuoy-config")]
    pub config: PluginConfig,
    pub spec: Container,
}

/// Sonobuoy's `manifest.SonobuoyConfig`.
#[derive(Debug, Serialize)]
pub struct PluginConfig {
    pub driver: &'static str,
    #[serde(rename = "plugin-name")]
    pub plugin_name: &'static str,
    #[serde(rename = "result-format")]
    pub result_format: &'static str,
    pub description: &'static str,
    #[serde(rename = "source-url")]
    pub source_url: &'static str,
}

/// The `check` flags of the plugin container.
pub fn fixed_check_args(static_only: bool) -> Vec<String> {
    let mut args: Vec<String> = ["--sonobuoy", "--progress", "always"]
        .map(String::from)
        .to_vec();
    if static_only {
        args.push("--static-only".into());
    }
    args
}

/// The plugin definition.
pub fn plugin(args: &SonobuoyManifestsArgs) -> Result<Plugin, ManifestsError> {
    let image = image(&args.image)?;
    let command = check_args(&fixed_check_args(args.static_only), &args.check_args)?;
    Ok(Plugin {
        config: PluginConfig {
            driver: "Job",
            plugin_name: PLUGIN_NAME,
            result_format: "junit",
            description: "Cluster API provider contract conformance: every rule of capi-conformance against the providers installed in the cluster",
            source_url: "https://github.com/capi-conformance/capi-conformance",
        },
        spec: Container {
            name: "plugin".into(),
            image: Some(image),
            image_pull_policy: Some("IfNotPresent".into()),
            command: Some(vec![IMAGE_BINARY.into()]),
            args: Some(command),
            volume_mounts: Some(vec![VolumeMount {
                name: "results".into(),
                mount_path: RESULTS_DIR.into(),
                ..VolumeMount::default()
            }]),
            security_context: Some(SecurityContext {
                run_as_non_root: Some(true),
                allow_privilege_escalation: Some(false),
                capabilities: Some(Capabilities {
                    drop: Some(vec!["ALL".into()]),
                    add: None,
                }),
                ..SecurityContext::default()
            }),
            ..Container::default()
        },
    })
}

/// The printed YAML.
pub fn render(args: &SonobuoyManifestsArgs) -> Result<String, ManifestsError> {
    let body = yaml(&plugin(args)?)?;
    Ok(format!(
        "# capi-conformance as a Sonobuoy plugin (`capi-conformance manifests sonobuoy --help`).\n\
         # sonobuoy run --plugin <this file> --wait; sonobuoy results $(sonobuoy retrieve)\n{body}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn plugin_definition_follows_the_sonobuoy_contract() {
        let args = SonobuoyManifestsArgs {
            static_only: false,
            image: "registry.example/cc:dev".into(),
            check_args: vec!["--fail-on".into(), "should".into()],
        };
        let text = render(&args).unwrap();
        let doc: Value = serde_saphyr::from_str(&text).unwrap();
        let cfg = &doc["sonobuoy-config"];
        assert_eq!(cfg["driver"], "Job");
        assert_eq!(cfg["plugin-name"], PLUGIN_NAME);
        assert_eq!(cfg["result-format"], "junit");
        let spec = &doc["spec"];
        assert_eq!(spec["image"], "registry.example/cc:dev");
        assert_eq!(spec["command"][0], IMAGE_BINARY);
        assert_eq!(spec["args"][0], "check");
        assert_eq!(spec["args"][1], "--sonobuoy");
        assert_eq!(spec["volumeMounts"][0]["mountPath"], RESULTS_DIR);
        assert_eq!(spec["volumeMounts"][0]["name"], "results");
        let n = spec["args"].as_array().unwrap().len();
        assert_eq!(spec["args"][n - 1], "should");
    }
}
