-- Nothing to undo: a validated check is dropped with its column (previous migration's down).
SELECT 1;
