-- Issue 37 (docs/imports.md, "The file"): a `pgccId` is registered once per file. Two lines of
-- one file naming the same consent on the PGCC were both staged; claimed at the same moment by
-- two workers, the second's confirmation broke the company's unique (empresa_id, pgcc_id) and
-- the line was tried again after every lease instead of becoming a line error. Staging now asks,
-- per batch, which of its `pgccId`s a line of the import holds already: this index answers it
-- with one probe per id, whatever the file's size. Not unique: imports staged before this
-- check may hold a repeated `pgccId` (their later line ends as a line error at registration).
-- Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS importacao_linhas_pgcc_id
    ON importacao_linhas (empresa_id, importacao_id, pgcc_id)
    WHERE pgcc_id IS NOT NULL;
