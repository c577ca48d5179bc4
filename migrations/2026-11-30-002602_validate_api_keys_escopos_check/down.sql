-- Nothing to undo: a validated constraint is dropped with its column by the previous migration's
-- down.sql.
SELECT 1;
