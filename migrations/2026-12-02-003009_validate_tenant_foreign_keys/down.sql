-- Nothing to undo: validation changes no definition (the previous migration's down drops the keys).
SELECT 1;
