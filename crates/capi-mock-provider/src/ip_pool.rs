//! The addresses of a MockIPPool: parsing `spec.addresses` (single IPs, ranges `a-b`, CIDRs;
//! one family), `spec.prefix` and `spec.gateway`, and choosing the next free address.
//!
//! Addresses are held as `u128` (IPv4 in the low 32 bits) in sorted, merged, inclusive ranges.
//! An IPv4 CIDR shorter than /31 leaves out its network and broadcast addresses; the gateway is
//! never handed out.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a pool's spec cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error("spec.addresses is empty")]
    NoAddresses,
    #[error("spec.addresses: {0:?} is not an IP address, a range a-b or a CIDR")]
    BadAddress(String),
    #[error("spec.addresses: range {0:?} ends before it starts")]
    BackwardsRange(String),
    #[error("spec.addresses mixes IPv4 and IPv6")]
    MixedFamilies,
    #[error("spec.prefix {prefix} is outside 0..={max}")]
    BadPrefix { prefix: i64, max: u8 },
    #[error("spec.gateway: {0:?} is not an IP address of the pool's family")]
    BadGateway(String),
}

/// The parsed addresses of a pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolAddresses {
    v6: bool,
    /// Sorted, disjoint, inclusive.
    ranges: Vec<(u128, u128)>,
    gateway: Option<u128>,
    prefix: u8,
}

fn to_bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

impl PoolAddresses {
    /// Parses a pool's spec.
    pub fn parse(
        addresses: &[String],
        prefix: i64,
        gateway: Option<&str>,
    ) -> Result<PoolAddresses, PoolError> {
        let mut family: Option<bool> = None;
        let mut ranges = Vec::new();
        for entry in addresses.iter().map(|a| a.trim()) {
            let (v6, start, end) = parse_entry(entry)?;
            if *family.get_or_insert(v6) != v6 {
                return Err(PoolError::MixedFamilies);
            }
            ranges.push((start, end));
        }
        let v6 = family.ok_or(PoolError::NoAddresses)?;
        let max = if v6 { 128 } else { 32 };
        let prefix = u8::try_from(prefix)
            .ok()
            .filter(|p| *p <= max)
            .ok_or(PoolError::BadPrefix { prefix, max })?;
        let gateway = gateway
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(|g| match g.parse::<IpAddr>() {
                Ok(ip) if ip.is_ipv6() == v6 => Ok(to_bits(ip)),
                _ => Err(PoolError::BadGateway(g.to_string())),
            })
            .transpose()?;
        ranges.sort_unstable();
        let mut merged: Vec<(u128, u128)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Ok(PoolAddresses {
            v6,
            ranges: merged,
            gateway,
            prefix,
        })
    }

    /// Whether the pool hands out IPv6 addresses.
    pub fn is_v6(&self) -> bool {
        self.v6
    }

    /// `spec.prefix`.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// `spec.gateway`, normalised.
    pub fn gateway(&self) -> Option<IpAddr> {
        self.gateway.and_then(|g| self.ip(g))
    }

    /// How many addresses the pool can hand out (the gateway excluded), saturating.
    pub fn total(&self) -> u128 {
        let all = self.ranges.iter().fold(0u128, |n, (s, e)| {
            n.saturating_add((e - s).saturating_add(1))
        });
        all - u128::from(self.gateway.is_some_and(|g| self.covers(g)))
    }

    /// Whether `ip` is one of the pool's addresses (the gateway is not).
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv6() == self.v6 && Some(to_bits(ip)) != self.gateway && self.covers(to_bits(ip))
    }

    fn covers(&self, bits: u128) -> bool {
        self.ranges.iter().any(|(s, e)| (*s..=*e).contains(&bits))
    }

    fn ip(&self, bits: u128) -> Option<IpAddr> {
        if self.v6 {
            Some(IpAddr::V6(Ipv6Addr::from(bits)))
        } else {
            u32::try_from(bits)
                .ok()
                .map(|b| IpAddr::V4(Ipv4Addr::from(b)))
        }
    }

    /// The lowest address of the pool that is neither the gateway nor in `used`.
    pub fn next_free(&self, used: &BTreeSet<IpAddr>) -> Option<IpAddr> {
        let used: BTreeSet<u128> = used
            .iter()
            .filter(|ip| ip.is_ipv6() == self.v6)
            .map(|ip| to_bits(*ip))
            .collect();
        for (start, end) in &self.ranges {
            let mut candidate = *start;
            loop {
                if Some(candidate) != self.gateway && !used.contains(&candidate) {
                    return self.ip(candidate);
                }
                if candidate == *end {
                    break;
                }
                candidate += 1;
            }
        }
        None
    }

    /// The first address after the pool's last one that is not in `used`: an address outside
    /// the pool (what the `ipam/address-object` fault hands out).
    pub fn next_outside(&self, used: &BTreeSet<IpAddr>) -> Option<IpAddr> {
        let (_, last) = self.ranges.last()?;
        let limit = if self.v6 {
            u128::MAX
        } else {
            u128::from(u32::MAX)
        };
        let mut candidate = last.checked_add(1)?;
        while candidate <= limit {
            let ip = self.ip(candidate)?;
            if !used.contains(&ip) && Some(candidate) != self.gateway {
                return Some(ip);
            }
            candidate = candidate.checked_add(1)?;
        }
        None
    }
}

/// One `spec.addresses` entry: (IPv6?, first, last).
fn parse_entry(entry: &str) -> Result<(bool, u128, u128), PoolError> {
    let bad = || PoolError::BadAddress(entry.to_string());
    if let Some((addr, bits)) = entry.split_once('/') {
        let ip: IpAddr = addr.trim().parse().map_err(|_| bad())?;
        let width: u32 = if ip.is_ipv6() { 128 } else { 32 };
        let bits: u32 = bits.trim().parse().map_err(|_| bad())?;
        if bits > width {
            return Err(bad());
        }
        let host_bits = width - bits;
        let host_mask = if host_bits == 128 {
            u128::MAX
        } else {
            (1u128 << host_bits) - 1
        };
        let network = to_bits(ip) & !host_mask;
        let broadcast = network | host_mask;
        if !ip.is_ipv6() && bits < 31 {
            return Ok((false, network + 1, broadcast - 1));
        }
        return Ok((ip.is_ipv6(), network, broadcast));
    }
    if let Some((a, b)) = entry.split_once('-') {
        let a: IpAddr = a.trim().parse().map_err(|_| bad())?;
        let b: IpAddr = b.trim().parse().map_err(|_| bad())?;
        if a.is_ipv6() != b.is_ipv6() {
            return Err(PoolError::MixedFamilies);
        }
        let (a, b) = (to_bits(a), to_bits(b));
        if b < a {
            return Err(PoolError::BackwardsRange(entry.to_string()));
        }
        return Ok((entry.contains(':'), a, b));
    }
    let ip: IpAddr = entry.parse().map_err(|_| bad())?;
    Ok((ip.is_ipv6(), to_bits(ip), to_bits(ip)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(addresses: &[&str], prefix: i64, gateway: Option<&str>) -> PoolAddresses {
        let addresses: Vec<String> = addresses.iter().map(|s| s.to_string()).collect();
        PoolAddresses::parse(&addresses, prefix, gateway).unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn single_ranges_and_cidrs_merge_and_skip_the_gateway() {
        let p = pool(
            &["10.0.0.1", "10.0.0.2-10.0.0.4", "10.0.0.8/30"],
            24,
            Some("10.0.0.1"),
        );
        assert_eq!(p.total(), 3 + 2);
        let mut used = BTreeSet::new();
        let mut got = Vec::new();
        while let Some(a) = p.next_free(&used) {
            used.insert(a);
            got.push(a.to_string());
        }
        assert_eq!(
            got,
            ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.9", "10.0.0.10"]
        );
        assert!(!p.contains(ip("10.0.0.1")));
        assert!(p.contains(ip("10.0.0.9")));
        assert!(!p.contains(ip("10.0.0.11")));
        assert_eq!(p.next_outside(&BTreeSet::new()), Some(ip("10.0.0.11")));
    }

    #[test]
    fn ipv6_pools_and_small_cidrs() {
        let p = pool(&["fd00::/126"], 64, Some("fd00::1"));
        assert_eq!(p.total(), 3);
        assert_eq!(p.next_free(&BTreeSet::new()), Some(ip("fd00::")));
        assert_eq!(p.next_outside(&BTreeSet::new()), Some(ip("fd00::4")));
        let p = pool(&["10.0.0.0/31", "10.0.1.5/32"], 24, None);
        assert_eq!(p.total(), 3);
    }

    #[test]
    fn bad_specs_are_errors() {
        let parse = |a: &[&str], prefix: i64, g: Option<&str>| {
            let a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
            PoolAddresses::parse(&a, prefix, g)
        };
        assert_eq!(parse(&[], 24, None), Err(PoolError::NoAddresses));
        assert!(matches!(
            parse(&["nope"], 24, None),
            Err(PoolError::BadAddress(_))
        ));
        assert_eq!(
            parse(&["10.0.0.1", "fd00::1"], 24, None),
            Err(PoolError::MixedFamilies)
        );
        assert!(matches!(
            parse(&["10.0.0.1"], 33, None),
            Err(PoolError::BadPrefix { .. })
        ));
        assert!(matches!(
            parse(&["10.0.0.4-10.0.0.1"], 24, None),
            Err(PoolError::BackwardsRange(_))
        ));
        assert!(matches!(
            parse(&["10.0.0.1"], 24, Some("fd00::1")),
            Err(PoolError::BadGateway(_))
        ));
        assert!(parse(&["fd00::1"], 128, None).is_ok());
    }

    #[test]
    fn an_exhausted_pool_has_nothing_free() {
        let p = pool(&["10.0.0.5"], 24, None);
        let used: BTreeSet<IpAddr> = [ip("10.0.0.5")].into();
        assert_eq!(p.next_free(&used), None);
        assert_eq!(p.next_outside(&used), Some(ip("10.0.0.6")));
    }
}
