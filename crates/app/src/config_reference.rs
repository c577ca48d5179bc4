//! The configuration reference of docs/operations.md ("Every key") checked against
//! config/default.toml: one source per fact, so a key added, renamed or given another default
//! without its row fails `make test`.

#[cfg(test)]
mod tests {
    use config::{Config, File, FileFormat, Value, ValueKind};

    const DEFAULTS: &str = include_str!("../../../config/default.toml");
    const OPERATIONS: &str = include_str!("../../../docs/operations.md");

    /// `(APP__SECTION__KEY, default as written in the TOML)` for every key of default.toml.
    fn defaults() -> Vec<(String, String)> {
        let config = Config::builder()
            .add_source(File::from_str(DEFAULTS, FileFormat::Toml))
            .build()
            .unwrap();
        let mut keys = Vec::new();
        for (section, table) in config.cache.into_table().unwrap() {
            for (key, value) in table.into_table().unwrap() {
                let var = format!("APP__{}__{}", section, key).to_uppercase();
                keys.push((var, text(&value)));
            }
        }
        keys.sort();
        keys
    }

    fn text(value: &Value) -> String {
        match &value.kind {
            ValueKind::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// The default cell of the reference table's row naming `var` (a row may name several
    /// variables sharing a default, each written in full).
    fn documented_default(var: &str) -> Option<String> {
        OPERATIONS
            .lines()
            .filter(|line| line.starts_with("| `APP__"))
            .find(|line| {
                line.split('|')
                    .nth(1)
                    .unwrap_or("")
                    .contains(&format!("`{var}`"))
            })
            .map(|line| line.split('|').nth(2).unwrap_or("").trim().to_owned())
    }

    #[test]
    fn every_key_of_default_toml_is_in_the_reference_with_its_default() {
        let mut problems = Vec::new();
        for (var, default) in defaults() {
            let Some(cell) = documented_default(&var) else {
                problems.push(format!("{var}: no row in docs/operations.md"));
                continue;
            };
            let shown = match default.as_str() {
                // secrets and empty values are described, not shown
                _ if var.ends_with("ENCRYPTION_KEY") => "development key".to_owned(),
                "" => "empty".to_owned(),
                _ => default.clone(),
            };
            if !cell.contains(&shown) {
                problems.push(format!(
                    "{var}: default.toml says {default:?}, the reference says {cell:?}"
                ));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn every_variable_of_the_reference_is_a_key_of_default_toml_or_an_optional_one() {
        // optional keys: commented out in default.toml, unset unless given
        let optional = [
            "APP__PGCC__TOKEN",
            "APP__METRICS__TOKEN",
            "APP__CACHE__FEED_URL",
            "APP__DATABASE__MIGRATION_URL",
        ];
        let known: Vec<String> = defaults().into_iter().map(|(var, _)| var).collect();
        for line in OPERATIONS.lines().filter(|l| l.starts_with("| `APP__")) {
            let names = line.split('|').nth(1).unwrap();
            let first = names.split('`').nth(1).unwrap();
            assert!(
                known.iter().any(|k| k == first) || optional.contains(&first),
                "{first} is documented but is not a key of config/default.toml"
            );
        }
    }
}
