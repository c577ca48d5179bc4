fn main() {
    // The test kit embeds ../migrations: rebuild it (and so the test template) when they change.
    println!("cargo:rerun-if-changed=../migrations");
}
