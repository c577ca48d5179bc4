//! Conditions written as fixed SQL text that diesel may still prepare once per connection.
//!
//! `diesel::dsl::sql` marks every query it appears in unsafe to cache (its text could hold
//! anything), so such a query is parsed and planned on every call: measured on HashConsulta,
//! most of its PostgreSQL time. A condition whose text is a compile-time constant is as safe to
//! cache as the DSL's own, and [`fixed_condition!`] declares one.
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
