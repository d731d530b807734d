# Quick start: `make demo` then `make test` (see README.md).
CARGO ?= cargo
DEMO_ARGS ?= --rows 2000000

.PHONY: deps build demo test bench

deps:
	@scripts/ensure-deps.sh

build: deps
	$(CARGO) build --release

## A real ingest into a throwaway local PostgreSQL, then the report.
demo: build
	./target/release/dbload ingest $(DEMO_ARGS)

## Format, lints, docs, unit tests and integration tests against a real PostgreSQL.
test: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --quiet
	$(CARGO) test

## Every bench (dbload against the server's own COPY, pgbench, wrk; memory
## per worker and per VU), then one table of figures, ratios and targets.
bench: build
	bench/all.sh
