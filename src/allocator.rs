//! The binaries' allocator: mimalloc (declared `#[global_allocator]` in each binary), purging
//! freed memory at once.
//!
//! mimalloc v3 (what `libmimalloc-sys` 0.1.49 builds) returns the pages it no longer uses to the
//! OS after `purge_delay` (1 s by default, times 10 for arena pages). A run of `check --embedded`
//! frees and reallocates a lot within that time (every watch event, every response), so its peak
//! RSS held pages it no longer needed (about 10 MB more than with an immediate purge, at the
//! same wall time). The option is read at each purge, so setting it first in
//! `main` is enough (the options mimalloc reads once, at process start before `main`, cannot be
//! set from here).

use std::ffi::{c_int, c_long};

// mimalloc's C library (linked through the `mimalloc` crate, which the binaries use).
use mimalloc as _;

/// `mi_option_purge_delay` in mimalloc v3's `include/mimalloc.h` (`mi_option_e`, the 16th
/// option; the crate's bindings name only v2's options, where it has another index).
const MI_OPTION_PURGE_DELAY: c_int = 15;
/// `mi_option_arena_eager_commit` (the 5th): whether a new arena is committed whole.
const MI_OPTION_ARENA_EAGER_COMMIT: c_int = 4;

/// Runs before `main` (an ELF constructor), before the allocations that reserve mimalloc's
/// first arenas: arenas are committed as they are used instead of whole (mimalloc's default,
/// 2, commits each new arena at once on an OS that overcommits, as Linux does), unless
/// `MIMALLOC_ARENA_EAGER_COMMIT` says otherwise: `check --embedded` peaks about 8 MiB lower at the
/// same wall time (`scripts/bench.sh check`, docs/performance.md).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static COMMIT_ARENAS_LAZILY: extern "C" fn() = commit_arenas_lazily;

#[cfg(target_os = "linux")]
extern "C" fn commit_arenas_lazily() {
    if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
        // SAFETY: sets one entry of mimalloc's option table; runs before `main`, single-threaded.
        unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) }
    }
}

unsafe extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_option_get(option: c_int) -> c_long;
}

/// Makes mimalloc return freed pages to the OS at once, unless `MIMALLOC_PURGE_DELAY` says
/// otherwise. Call it first in `main`.
pub fn purge_at_once() {
    // Keeps the constructor's object linked into every binary that calls this.
    #[cfg(target_os = "linux")]
    let _ = &COMMIT_ARENAS_LAZILY;
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one entry of mimalloc's option table; no other thread exists yet.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
    }
}

/// mimalloc's current arena eager-commit setting (its default: 2; 0 once
/// `COMMIT_ARENAS_LAZILY` ran).
pub fn arena_eager_commit() -> c_long {
    // SAFETY: reads one entry of mimalloc's option table.
    unsafe { mi_option_get(MI_OPTION_ARENA_EAGER_COMMIT) }
}

/// mimalloc's current purge delay in milliseconds (its default: 1000).
pub fn purge_delay_ms() -> c_long {
    // SAFETY: reads one entry of mimalloc's option table.
    unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }
}

#[cfg(test)]
mod tests {
    /// The index names `purge_delay`: its default is 1000 ms (unless the environment sets
    /// `MIMALLOC_PURGE_DELAY`), and setting it reads back.
    #[test]
    fn arenas_are_committed_lazily_from_before_main() {
        if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
            assert_eq!(super::arena_eager_commit(), 0);
        }
    }

    #[test]
    fn the_option_index_is_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(super::purge_delay_ms(), 1000);
            super::purge_at_once();
            assert_eq!(super::purge_delay_ms(), 0);
        }
    }
}
