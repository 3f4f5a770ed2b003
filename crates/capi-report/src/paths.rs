//! File names built from object or provider names (`--report-dir`): one safe path component.

/// Longest component we write (most file systems allow 255 bytes).
const MAX_COMPONENT: usize = 120;

/// Turns any text into a single, harmless file-name component: only ASCII letters, digits, `-`,
/// `_` and `.` survive (everything else, including `/`, `\`, NUL and non-ASCII, becomes `_`);
/// a result made only of dots (`.`, `..`) or empty becomes `_`, so the component can never
/// leave the report directory; long names are cut to 120 bytes.
pub fn safe_component(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_COMPONENT)
        .collect();
    if out.chars().all(|c| c == '.') {
        out = out.replace('.', "_");
        if out.is_empty() {
            out.push('_');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_and_separators_are_neutralised() {
        assert_eq!(safe_component("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(safe_component(".."), "__");
        assert_eq!(safe_component("."), "_");
        assert_eq!(safe_component(""), "_");
        assert_eq!(safe_component("a\\b\0c"), "a_b_c");
        assert_eq!(
            safe_component("infra-machine/v1beta2"),
            "infra-machine_v1beta2"
        );
        assert_eq!(safe_component(&"x".repeat(500)).len(), 120);
    }
}
