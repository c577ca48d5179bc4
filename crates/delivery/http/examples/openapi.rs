//! Prints the OpenAPI document: `cargo run -p consent-http --example openapi > openapi.json`.
fn main() {
    println!(
        "{}",
        serde_json::to_string_pretty(&delivery_http::openapi_json()).unwrap()
    );
}
