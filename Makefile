# The two commands a newcomer types: `make run` and `make test`; `make check` is the inner loop.
.PHONY: run check test test-scale schema check-schema test-citus build release lint lint-migrations lint-contract fmt clean-db fuzz-contract fuzz bench bench-scale bench-import bench-domain

run: ## local PostgreSQL + PGCC simulator + demo company and key + API on 127.0.0.1:8080
	@bash scripts/run.sh

check: ## the ~900 tests that need no database (no PostgreSQL started) + the paths docs/architecture.md names; the inner loop
	@bash scripts/check.sh

test: ## every test but the scale tests, against a throw-away PostgreSQL cluster
	@bash scripts/test.sh

test-scale: ## the scale tests (a 10^6-entry audit log: minutes), against a throw-away PostgreSQL cluster; CI runs it after `make test`
	@NEXTEST_PROFILE=scale bash scripts/test.sh

schema: ## regenerate crates/adapters/postgres/src/schema.rs from the migrations (diesel print-schema + schema.patch)
	@bash scripts/check-schema.sh --write

check-schema: ## fail when schema.rs differs from what the migrations generate (CI runs it)
	@bash scripts/check-schema.sh

test-citus: ## the end-to-end suite, a rebalance under load and each statement's plan on a Citus cluster, if Citus for PostgreSQL 15 is installed (else says so, exits 0); not run by CI (docs/scaling.md)
	@bash scripts/test-citus.sh $(ARGS)

fuzz-contract: ## schemathesis against the live OpenAPI document (CI runs it after `make test`)
	@bash scripts/schemathesis.sh

fuzz: ## each cargo-fuzz target for FUZZ_SECONDS (default 30); not part of `make test` nor CI
	@bash scripts/fuzz.sh

bench: ## PostgreSQL + pgcc-sim + release build, 100k-request data set, wrk (req/s) + loadgen (open-loop p50/p99) + pgbench + c15t runs -> docs/performance.md; not run by `make test` nor CI
	@bash scripts/bench.sh

bench-scale: ## cost curves: consent requests growing 10^5 -> 10^6 -> 10^7 (COPY), req/s + open-loop p50/p99 of creation and the reads, table and index sizes, then the background work (status checks at each size, the webhook claim at 10^3 and the largest) -> docs/performance.md; ~9 GB of disk; not run by `make test` nor CI
	@bash scripts/bench-scale.sh

bench-import: ## the bulk import: 10^6 JSON Lines staged (lines/s), registered at its PGCC budget, peak RSS, the errors naming exactly the broken lines, another company's creation p50/p99 idle vs during an import -> target/bench-import/results.txt; not run by `make test` nor CI
	@bash scripts/bench-import.sh

bench-domain: ## criterion benchmarks of the domain's hot paths (CPF/CNPJ parsing, envelope serialization)
	cargo bench -p consent-domain

build:
	cargo build --workspace --all-targets

release: ## optimized binaries (profile.release: thin LTO, one codegen unit); not run by CI
	cargo build --release --locked --bins
	@echo "binaries: $(CURDIR)/target/release/consent-api $(CURDIR)/target/release/pgcc-sim"

lint: ## what CI checks besides the tests
	@bash scripts/lint-migrations.sh
	@bash scripts/check-doc-paths.sh
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

lint-contract: ## Spectral (spectral:oas + OWASP API Security, .spectral.yaml) over the live /openapi.json; CI runs it
	@bash scripts/lint-contract.sh

lint-migrations: ## squawk over migrations/*/up.sql with .squawk.toml (policy: docs/operations.md, "Migrate")
	@bash scripts/lint-migrations.sh

fmt:
	cargo fmt --all

clean-db: ## forget the local development database
	bash -c 'source scripts/common.sh; d=$$(cluster_dir dev); scripts/pg.sh stop "$$d"; rm -rf "$$d"'
