-- A cancelled import's lines are cleared in the background, a batch at a time (docs/imports.md,
-- "Cancelling"): clearing all of them in the cancellation's own statement outlasted the
-- statement timeout at 10^6 lines (`make bench-import`), and the cancellation failed. This flag
-- lists the imports still to clear; a constant default adds the column without a rewrite.
ALTER TABLE importacoes ADD COLUMN linhas_a_limpar boolean NOT NULL DEFAULT false;
