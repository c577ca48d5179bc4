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
//! An operator's own `MALLOC_ARENA_MAX` (or `GLIBC_TUNABLES` naming `glibc.malloc.arena_max`)
//! wins: the arena bound is then left as they set it. Other C libraries: nothing is done.

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
