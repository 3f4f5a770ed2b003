use super::*;

#[test]
fn relative_paths_climb_out_of_the_base() {
    assert_eq!(
        relative_path(Path::new("/work/repo/config"), Path::new("/tmp/ov")),
        Some(PathBuf::from("../../work/repo/config"))
    );
    assert_eq!(
        relative_path(Path::new("/a/b"), Path::new("/a/b")),
        Some(PathBuf::from("."))
    );
    assert_eq!(
        normalize(Path::new("/tmp/ov/../../work/x/./y")),
        PathBuf::from("/work/x/y")
    );
    assert_eq!(
        normalize(Path::new("../../a/../b")),
        PathBuf::from("../../b")
    );
    assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
}

#[test]
fn explicit_commands_get_the_right_subcommand() {
    let t = Kustomize::Command("sh".into()).tool("r").unwrap();
    assert_eq!(t.args, vec![OsString::from("build")]);
    assert_eq!(t.label, "sh build");
    let t = Kustomize::Command("sh -c".into()).tool("r").unwrap();
    assert_eq!(t.args, vec![OsString::from("-c")]);
    let e = Kustomize::Command("/nonexistent/kustomize".into())
        .tool("config/default")
        .unwrap_err()
        .to_string();
    assert!(
            e.starts_with("config/default: --kustomize /nonexistent/kustomize: `/nonexistent/kustomize` not found; install kustomize"),
            "{e}"
        );
}

#[test]
fn errors_drop_warnings_and_the_error_prefix() {
    let status = std::process::Command::new("true").status().unwrap();
    let text = error_text(
        b"# Warning: 'bases' is deprecated.\nError: accumulating resources: missing.yaml\n",
        status,
    );
    assert_eq!(text, "accumulating resources: missing.yaml");
    let text = error_text(
            br#"E1125 09:00:08.365539   16496 run.go:72] "command failed" err="accumulating resources: 'missing.yaml': no such file""#,
            status,
        );
    assert_eq!(text, "accumulating resources: 'missing.yaml': no such file");
}
