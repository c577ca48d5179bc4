//! How the process holds its memory (issue 40: peak RSS under 64 MB in `make bench`): glibc's
//! malloc arenas are one per core (crates/app/src/memory.rs), whatever the number of threads the
//! service runs, unless the operator sets `MALLOC_ARENA_MAX` themselves. Linux with glibc only.

use std::ffi::OsStr;

use testkit::processes::company_with_key;
use testkit::{Api, Client, Sim, TestDb};

use crate::helpers::*;

/// glibc reserves each arena's heap beyond the main one as 64 MiB, aligned to 64 MiB
/// (`HEAP_MAX_SIZE` on 64-bit), and maps it read-write as it grows: an anonymous read-write
/// mapping at a 64 MiB boundary, followed by the inaccessible rest of the reservation, 64 MiB in
/// all. A thread's stack starts with its guard page instead, and the main arena is `[heap]`.
fn malloc_arena_heaps(pid: u32) -> usize {
    const HEAP_MAX: u64 = 64 << 20;
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("/proc/<pid>/maps");
    let parsed: Vec<(u64, u64, String, bool)> = maps
        .lines()
        .map(|line| {
            let mut fields = line.split_whitespace();
            let range = fields.next().expect("a range");
            let perms = fields.next().expect("permissions").to_owned();
            let anonymous = fields.nth(3).is_none(); // offset, device, inode, then no path
            let (start, end) = range.split_once('-').expect("start-end");
            let hex = |h: &str| u64::from_str_radix(h, 16).expect("a hex address");
            (hex(start), hex(end), perms, anonymous)
        })
        .collect();
    parsed
        .iter()
        .enumerate()
        .filter(|(i, (start, end, perms, anonymous))| {
            if !anonymous || !perms.starts_with("rw") || start % HEAP_MAX != 0 {
                return false;
            }
            let reserved_to = match parsed.get(i + 1) {
                Some((next_start, next_end, next_perms, true))
                    if next_start == end && next_perms.starts_with("---") =>
                {
                    *next_end
                }
                _ => *end,
            };
            reserved_to - start == HEAP_MAX
        })
        .count()
}

fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("/proc/<pid>/task")
        .count()
}

/// `consent-api serve` on one core (`taskset -c 0`), after 32 concurrent requests, each through
/// the blocking pool: its threads, and the malloc arenas beside the main one.
fn on_one_core(env: &[(&str, &str)]) -> (usize, usize) {
    let db = TestDb::new();
    let sim = Sim::start(&seed());
    let (_, key) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
    let wrapper = [OsStr::new("taskset"), OsStr::new("-c"), OsStr::new("0")];
    let api = Api::start_wrapped(&db, &sim, env, &wrapper);
    let client = Client::new(&api.base_url, Some(&key));
    std::thread::scope(|s| {
        for i in 0..32 {
            let client = &client;
            // a hash no request has: the lookup runs on the blocking pool, and answers 404
            s.spawn(move || {
                client
                    .get(&format!("/api/hash-consulta/{i:064x}"))
                    .expect(404);
            });
        }
    });
    (threads(api.pid()), malloc_arena_heaps(api.pid()))
}

#[test]
fn the_service_allocates_from_one_malloc_arena_per_core_whatever_its_threads() {
    let (threads, arenas) = on_one_core(&[]);
    assert!(
        threads > 4,
        "{threads} threads: too few for the bound to be what keeps the arenas down"
    );
    assert_eq!(
        arenas, 0,
        "one core: the main arena only, with {threads} threads"
    );

    // The operator's own setting wins, and it shows how glibc spreads threads without the bound
    // (up to 8 arenas a core on its own): the arenas above are counted, not missed.
    let (threads, arenas) = on_one_core(&[("MALLOC_ARENA_MAX", "4")]);
    assert!(
        (1..=3).contains(&arenas),
        "MALLOC_ARENA_MAX=4: {arenas} arenas beside the main one, with {threads} threads"
    );
}

/// The variables the running process was started with (after its own exec, if any). glibc's
/// loader rewrites `GLIBC_TUNABLES` in place: only its first tunable shows here, though every
/// one applies (`ld.so --list-tunables` shows them).
fn environment(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .expect("/proc/<pid>/environ")
        .split(|b| *b == 0)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect()
}

/// `consent-api serve` with `env` set: the first tunable of the `GLIBC_TUNABLES` it runs with,
/// once it answered.
fn tunables_of_serve(env: &[(&str, &str)]) -> Option<String> {
    let db = TestDb::new();
    let sim = Sim::start(&seed());
    let (_, key) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
    let api = Api::start_with(&db, &sim, env);
    Client::new(&api.base_url, Some(&key))
        .get("/api/casos-de-uso")
        .expect(200);
    environment(api.pid())
        .into_iter()
        .find_map(|v| v.strip_prefix("GLIBC_TUNABLES=").map(str::to_owned))
}

#[test]
fn the_service_runs_without_glibcs_thread_caches_unless_the_operator_tuned_them() {
    // started again by itself with the caches off (the same process id the harness started)
    assert_eq!(
        tunables_of_serve(&[]).as_deref(),
        Some("glibc.malloc.tcache_count=0")
    );
    // the operator's own depth wins: no second start
    assert_eq!(
        tunables_of_serve(&[("GLIBC_TUNABLES", "glibc.malloc.tcache_count=3")]).as_deref(),
        Some("glibc.malloc.tcache_count=3")
    );
    // and their other tunables still apply after it: their own arena bound, seen in the arenas
    let (threads, arenas) = on_one_core(&[("GLIBC_TUNABLES", "glibc.malloc.arena_max=4")]);
    assert!(
        (1..=3).contains(&arenas),
        "GLIBC_TUNABLES=glibc.malloc.arena_max=4: {arenas} arenas beside the main one, with {threads} threads"
    );
}
