//! How the process uses glibc's allocator: what keeps `serve`'s resident memory near what it
//! holds (issue 40: a peak RSS above 64 MB in `make bench`, measured in docs/performance.md, "What
//! the service's memory is made of").
//!
//! - **Arenas.** glibc gives each thread that allocates while the others hold their arena a new
//!   one, up to 8 per core; every request's blocking hop runs on one of actix's blocking threads
//!   (about twenty under the bench's 16 connections), so the process ended with 16 arenas, each
//!   keeping its own freed memory and its own share of the cached lists. One arena per core bounds
//!   the lock contention by the threads that can run at once, and most small allocations skip the
//!   arena's lock anyway (each thread's tcache serves them).
//! - **Start-up garbage.** Building the OpenAPI document (utoipa's model, then a
//!   `serde_json::Value` of it) peaks at about 9 MB on the main thread and frees it; the freed
//!   pages stay resident under the heap's live top until given back.
//!
//! - **Thread caches.** Each thread keeps up to 7 freed chunks of each small size (glibc's
//!   tcache, up to about 230 KB a thread) for its next allocations; the twenty-odd blocking
//!   threads of a creation run kept about 5 MB that way, freed and still resident (`make bench`:
//!   the creation run's peak RSS 65.4 MB with them, 60.4 without, at the same rate). They are
//!   turned off ([`bound_thread_caches`]); the arena's own fast bins still serve small chunks.
//!
//! An operator's own `MALLOC_ARENA_MAX` (or `GLIBC_TUNABLES` naming `glibc.malloc.arena_max`)
//! wins: the arena bound is then left as they set it; so does their
//! `glibc.malloc.tcache_count`. Other C libraries: nothing is done.

/// glibc's tunable of the per-thread caches' depth (0: no thread cache).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TCACHE_COUNT: &str = "glibc.malloc.tcache_count";

/// Starts the process again with glibc's thread caches off (`GLIBC_TUNABLES`, the operator's own
/// tunables kept), unless the environment already sets their depth. glibc reads its tunables
/// once, in the dynamic loader before `main`, so setting one means executing the binary anew:
/// the same process id, arguments and open files. Call first thing in `main`. Returns when
/// nothing needs doing, or when the exec failed (the process then runs with glibc's defaults).
pub fn bound_thread_caches() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;

        let tunables = match std::env::var("GLIBC_TUNABLES") {
            Ok(t) if t.contains(TCACHE_COUNT) => return,
            // first: glibc's loader rewrites the variable in place and leaves only the first
            // tunable visible in /proc/<pid>/environ (every one still applies)
            Ok(t) if !t.is_empty() => format!("{TCACHE_COUNT}=0:{t}"),
            Ok(_) | Err(std::env::VarError::NotPresent) => format!("{TCACHE_COUNT}=0"),
            // not text: the operator's, left alone
            Err(std::env::VarError::NotUnicode(_)) => return,
        };
        let mut args = std::env::args_os();
        let Some(name) = args.next() else { return };
        // only returns on failure
        let _failed = std::process::Command::new("/proc/self/exe")
            .arg0(name)
            .args(args)
            .env("GLIBC_TUNABLES", tunables)
            .exec();
    }
}

/// Caps glibc's malloc arenas at the number of cores, unless the environment already sets a
/// cap. Call first thing in `main`: glibc fixes its limit when the second arena is made.
pub fn bound_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let operator_set = std::env::var_os("MALLOC_ARENA_MAX").is_some()
            || std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc.arena_max"));
        if operator_set {
            return;
        }
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let arenas = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a parameter of the allocator; no memory is touched.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}

/// Gives the pages of freed memory back to the kernel (every arena's, not only above the heap's
/// top): once, after start-up built and dropped what it needed only once.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages the allocator owns; it locks each arena.
    unsafe {
        libc::malloc_trim(0);
    }
}
