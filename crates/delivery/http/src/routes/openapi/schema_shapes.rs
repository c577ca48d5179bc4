//! Tidying of the serialized document that keeps its meaning.

use serde_json::Value;

/// utoipa writes a field whose type is inlined with a description of its own as
/// `{"description": ..., "oneOf": [<the type's schema>]}`. A one-branch `oneOf` is the branch
/// itself: merged, with the field's own keys (its description) winning, generators see a plain
/// string with its `pattern` and lengths instead of a union of one.
pub(super) fn inline_single_one_of(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let single = match map.get("oneOf") {
                Some(Value::Array(branches)) if branches.len() == 1 => branches[0]
                    .as_object()
                    .filter(|b| !b.contains_key("$ref"))
                    .cloned(),
                _ => None,
            };
            if let Some(branch) = single {
                map.remove("oneOf");
                for (key, v) in branch {
                    map.entry(key).or_insert(v);
                }
            }
            map.values_mut().for_each(inline_single_one_of);
        }
        Value::Array(items) => items.iter_mut().for_each(inline_single_one_of),
        _ => {}
    }
}
