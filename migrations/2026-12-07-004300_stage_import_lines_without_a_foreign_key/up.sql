-- Issue 37 (docs/performance.md, "Bulk import"): staging a file is bound by PostgreSQL's one
-- backend, and the per-row check of this foreign key was about a quarter of a staged line's
-- cost (a scratch cluster with this schema, 10^5 lines in batches of 1,000: 14.8 against 11.3
-- microseconds a line). The lines are written only by the staging of an import that exists (the
-- import's row is committed before its first batch), and its one delete, the discard of a
-- refused file, now deletes its lines itself in the same transaction
-- (`import_repository.rs`, `Discard`). Dropping a constraint takes a brief ACCESS EXCLUSIVE
-- lock and scans nothing.
-- squawk-ignore ban-drop-constraint
ALTER TABLE importacao_linhas DROP CONSTRAINT importacao_linhas_empresa_id_importacao_id_fkey;
