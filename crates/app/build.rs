//! Release builds on Linux with glibc link with packed relative relocations (`-z
//! pack-relative-relocs`, DT_RELR; glibc 2.36 and binutils 2.38 or later, Debian 12's). The
//! binary is position-independent, so each pointer in its read-only data is a relocation the
//! loader applies at start: as RELA entries that was 1.7 MB of `.rela.dyn` read at every start
//! and kept mapped, in the service's RSS (docs/performance.md, "What the service's memory is made
//! of"); as RELR, a few kilobytes. The binary stays position-independent (ASLR unchanged).
//! Debug builds and tests link as before.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("PROFILE") == "release"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
