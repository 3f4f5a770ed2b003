//! kubectl's duration syntax, read where a run's timing comes from text (an annotation, a flag).

use std::time::Duration;

/// A text that is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {value:?} (use e.g. 30s, 1m, 300ms, or a bare number of seconds)")]
pub struct DurationError {
    pub value: String,
}

/// Parses a kubectl duration: Go syntax (`1h2m3s`, `300ms`, `1.5s`) or a bare number of seconds.
/// `0` (in any unit) means "no timeout" and returns `None`.
pub fn parse_duration(value: &str) -> Result<Option<Duration>, DurationError> {
    let err = || DurationError {
        value: value.to_string(),
    };
    let s = value.trim();
    if s.is_empty() {
        return Err(err());
    }
    if let Ok(secs) = s.parse::<u64>() {
        return Ok((secs > 0).then(|| Duration::from_secs(secs)));
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        if num_len == 0 {
            return Err(err());
        }
        let number: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(err()),
        };
        total += number * factor;
        rest = &rest[unit_len..];
    }
    if !total.is_finite() {
        return Err(err());
    }
    Ok((total > 0.0).then(|| Duration::from_secs_f64(total)))
}
