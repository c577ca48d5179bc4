-- Nothing to undo: validating a check changes no definition.
SELECT 1;
