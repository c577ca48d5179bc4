//! SQL written as fixed text that diesel prepares once per connection, read top to bottom.
//!
//! - [`statement!`] declares a whole statement: one SQL string whose binds are named in the
//!   text (`$name`), and a struct holding them. Every hand-written statement of the adapter that
//!   diesel's DSL cannot say (CTEs writing several tables, `FOR UPDATE SKIP LOCKED` claims,
//!   upserts with conditions) is one.
//! - [`fixed_condition!`] declares a condition for the DSL's `.filter` whose text is a constant.
//!
//! Why not `diesel::sql_query` or `diesel::dsl::sql`: both mark their query unsafe to cache
//! (their text could be anything), so it is parsed and planned on every call (measured on
//! HashConsulta: most of its PostgreSQL time). A text that is a compile-time constant is as safe
//! to cache as the DSL's own; both macros give it a static query id.
//!
//! With `database.prepared_statements = false` (behind a transaction-mode pooler) diesel's
//! statement cache is off for the whole connection (`SessionSettings::apply`): these queries
//! then go as unnamed statements like every other, and nothing here needs a fallback.

/// `fixed_condition!(Name, "sql")`: a boolean expression usable in `.filter(Name)` whose SQL is
/// exactly `sql`, with a static query id (the statement is prepared once per connection).
macro_rules! fixed_condition {
    ($(#[$doc:meta])* $name:ident, $sql:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, diesel::query_builder::QueryId)]
        pub(crate) struct $name;

        impl diesel::expression::Expression for $name {
            type SqlType = diesel::sql_types::Bool;
        }

        impl<QS> diesel::expression::AppearsOnTable<QS> for $name {}

        impl<QS> diesel::expression::SelectableExpression<QS> for $name {}

        impl diesel::expression::ValidGrouping<()> for $name {
            type IsAggregate = diesel::expression::is_aggregate::Never;
        }

        impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for $name {
            fn walk_ast<'b>(
                &'b self,
                mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
            ) -> diesel::QueryResult<()> {
                out.push_sql($sql);
                Ok(())
            }
        }
    };
}

pub(crate) use fixed_condition;

/// `statement!`: a whole SQL statement as one string, its binds named in the text (`$name`), and
/// a struct with one field per bind, each given as `name: RustType as SqlType`:
///
/// ```ignore
/// statement! {
///     /// What it does.
///     struct Touch<'a> {
///         id: Uuid as diesel::sql_types::Uuid,
///         hash: &'a str as Text,
///     }
///     "UPDATE t SET atualizado_em = now() WHERE id = $id AND hash = $hash"
/// }
/// Touch { id, hash }.execute(conn)?;
/// ```
///
/// The text reads top to bottom as PostgreSQL will run it (each `$name` becomes the next `$n`,
/// a name used twice is bound twice); it is checked at compile time: every `$name` is a field,
/// every field is used. The statement has a static query id (a type of its own), so diesel
/// prepares it once per connection and then only executes it, without building its text again;
/// with `database.prepared_statements = false` it goes unnamed like every other query. It runs
/// with `execute`, or `load`/`get_result` into a `QueryableByName` struct (columns by name, as
/// with `diesel::sql_query`). No `Debug`: binds may hold personal data.
///
/// A statement without binds is declared `struct Name;` and runs as `Name.load(conn)`.
macro_rules! statement {
    (
        $(#[$doc:meta])*
        struct $name:ident;
        $sql:expr
    ) => {
        $(#[$doc])*
        pub(crate) struct $name;

        const _: () = {
            $crate::fixed_sql::check_binds($sql, &[]);

            /// The statement's query id: a type of its own, so diesel's statement cache keys
            /// it by type.
            pub struct StatementId;

            impl diesel::query_builder::QueryId for $name {
                type QueryId = StatementId;
                const HAS_STATIC_QUERY_ID: bool = true;
            }

            impl diesel::query_builder::Query for $name {
                type SqlType = diesel::sql_types::Untyped;
            }

            impl diesel::query_dsl::RunQueryDsl<diesel::PgConnection> for $name {}

            impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for $name {
                fn walk_ast<'b>(
                    &'b self,
                    mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
                ) -> diesel::QueryResult<()> {
                    out.push_sql($sql);
                    Ok(())
                }
            }
        };
    };
    (
        $(#[$doc:meta])*
        struct $name:ident $(<$lt:lifetime>)? {
            $($field:ident : $rust:ty as $sql_type:ty),* $(,)?
        }
        $sql:expr
    ) => {
        $(#[$doc])*
        pub(crate) struct $name $(<$lt>)? {
            $(pub(crate) $field: $rust,)*
        }

        const _: () = {
            $crate::fixed_sql::check_binds($sql, &[$(stringify!($field)),*]);

            /// The statement's query id: a type of its own, so diesel's statement cache keys
            /// it by type.
            pub struct StatementId;

            impl $(<$lt>)? diesel::query_builder::QueryId for $name $(<$lt>)? {
                type QueryId = StatementId;
                const HAS_STATIC_QUERY_ID: bool = true;
            }

            impl $(<$lt>)? diesel::query_builder::Query for $name $(<$lt>)? {
                type SqlType = diesel::sql_types::Untyped;
            }

            impl $(<$lt>)? diesel::query_dsl::RunQueryDsl<diesel::PgConnection>
                for $name $(<$lt>)? {}

            impl $(<$lt>)? diesel::query_builder::QueryFragment<diesel::pg::Pg>
                for $name $(<$lt>)?
            {
                fn walk_ast<'b>(
                    &'b self,
                    mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
                ) -> diesel::QueryResult<()> {
                    let mut rest: &'static str = $sql;
                    while let Some((text, bind, after)) = $crate::fixed_sql::next_bind(rest) {
                        out.push_sql(text);
                        $(
                            if bind == stringify!($field) {
                                out.push_bind_param::<$sql_type, _>(&self.$field)?;
                            } else
                        )* {
                            // excluded by `check_binds` at compile time
                            return Err(diesel::result::Error::QueryBuilderError(
                                "a statement names a bind it does not have".into(),
                            ));
                        }
                        rest = after;
                    }
                    out.push_sql(rest);
                    Ok(())
                }
            }
        };
    };
}

pub(crate) use statement;

/// Whether `byte` may start a bind name (`$name`).
const fn starts_name(byte: u8) -> bool {
    byte.is_ascii_lowercase() || byte == b'_'
}

/// Whether `byte` may continue a bind name.
const fn continues_name(byte: u8) -> bool {
    starts_name(byte) || byte.is_ascii_digit()
}

/// The end (exclusive) of the bind name starting at `start` (just after its `$`).
const fn name_end(sql: &[u8], start: usize) -> usize {
    let mut end = start;
    while end < sql.len() && continues_name(sql[end]) {
        end += 1;
    }
    end
}

/// Whether `sql[start..end]` is `name`.
const fn names(sql: &[u8], start: usize, end: usize, name: &str) -> bool {
    let name = name.as_bytes();
    if end - start != name.len() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if sql[start + i] != name[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The compile-time check of [`statement!`]: every `$` of `sql` starts the name of one of
/// `binds` (so no positional `$1` and no dollar quoting), and every bind is named at least once.
/// Panics (a compile error in a `const`) otherwise.
pub(crate) const fn check_binds(sql: &str, binds: &[&str]) {
    let sql = sql.as_bytes();
    let mut used = 0u64;
    assert!(binds.len() <= 64, "a statement has at most 64 binds");
    let mut at = 0;
    while at < sql.len() {
        if sql[at] == b'$' {
            let start = at + 1;
            assert!(
                start < sql.len() && starts_name(sql[start]),
                "a `$` in a statement must start a bind name (`$name`)"
            );
            let end = name_end(sql, start);
            let mut found = false;
            let mut i = 0;
            while i < binds.len() {
                if names(sql, start, end, binds[i]) {
                    used |= 1 << i;
                    found = true;
                }
                i += 1;
            }
            assert!(
                found,
                "a statement names a bind that is not one of its fields"
            );
            at = end;
        } else {
            at += 1;
        }
    }
    let all = if binds.len() == 64 {
        u64::MAX
    } else {
        (1u64 << binds.len()) - 1
    };
    assert!(
        used == all,
        "a field of a statement is not named in its text"
    );
}

/// Splits `sql` at its first bind: the text before it, the bind's name and the text after it;
/// `None` when no bind is left. [`check_binds`] has made sure that every `$` starts a name.
pub(crate) fn next_bind(sql: &'static str) -> Option<(&'static str, &'static str, &'static str)> {
    let dollar = sql.find('$')?;
    let start = dollar + 1;
    let end = name_end(sql.as_bytes(), start);
    Some((&sql[..dollar], &sql[start..end], &sql[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_is_split_at_each_bind_and_keeps_its_casts() {
        let sql = "SELECT * FROM t WHERE a = $a_1 AND b = ANY($bs::uuid[]) AND c = $a_1";
        check_binds(sql, &["a_1", "bs"]);
        let mut rest = sql;
        let mut parts = Vec::new();
        while let Some((text, bind, after)) = next_bind(rest) {
            parts.push((text, bind));
            rest = after;
        }
        assert_eq!(
            parts,
            [
                ("SELECT * FROM t WHERE a = ", "a_1"),
                (" AND b = ANY(", "bs"),
                ("::uuid[]) AND c = ", "a_1"),
            ]
        );
        assert_eq!(rest, "");
    }

    #[test]
    #[should_panic(expected = "not one of its fields")]
    fn an_unknown_bind_is_refused() {
        check_binds("SELECT $a, $b", &["a"]);
    }

    #[test]
    #[should_panic(expected = "not named in its text")]
    fn an_unused_field_is_refused() {
        check_binds("SELECT $a", &["a", "b"]);
    }

    #[test]
    #[should_panic(expected = "must start a bind name")]
    fn a_positional_placeholder_is_refused() {
        check_binds("SELECT $1", &[]);
    }
}
