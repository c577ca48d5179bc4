//! The migrations are embedded with `embed_migrations!`: rebuild this crate whenever one changes
//! (or one is added), so the binary never runs a stale set.

fn main() {
    println!("cargo:rerun-if-changed=../../../migrations");
}
