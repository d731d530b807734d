# Quick start: `make demo` then `make test` (see README.md); `make install` puts dbload on PATH.
CARGO ?= cargo
DEMO_ARGS ?= --rows 2000000

.PHONY: deps build demo test bench install man image

deps:
	@scripts/ensure-deps.sh

build: deps
	$(CARGO) build --release

## A real ingest into a throwaway local PostgreSQL, then the report.
demo: build
	./target/release/dbload ingest $(DEMO_ARGS)
	@echo "dbload is $(CURDIR)/target/release/dbload; make install puts it on your PATH"

## dbload on PATH: built optimised with the locked dependencies into cargo's bin directory
## (~/.cargo/bin, or $$CARGO_INSTALL_ROOT/bin), which rustup puts on PATH.
install:
	$(CARGO) install --path . --locked

## The man pages, made from the clap definitions: target/man/dbload.1 and one per command.
man: build
	./target/release/dbload man target/man
	@echo "man pages in $(CURDIR)/target/man: man -l target/man/dbload.1 (or copy them to a man1 directory)"

## Format, lints, docs, unit tests and integration tests against a real PostgreSQL.
test: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --quiet
	$(CARGO) test
	# The timer's precision, alone (beside the parallel unit tests, their load would be in it).
	$(CARGO) test --lib -- --ignored --exact clock::tests::wake_ups_are_on_time

## Every bench (dbload against pgbench, pipelined too, the server's own COPY and wrk;
## k6 run against dbload http, CPU per request and memory per VU; memory per worker,
## connection and VU), each comparison in 10 alternating rounds (ROUNDS=3 make bench
## for fewer), then one table: figures, the median ratio and its interquartile range,
## targets, the load average and the time it took (about 30 minutes).
bench: build
	bench/all.sh

## The container image docs/scale-out/job.yaml runs (Containerfile), with podman or docker:
## IMAGE=registry.example.com/dbload:0.1.0 make image, then push it (see docs/scale-out.md).
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
IMAGE ?= dbload:$(VERSION)
CONTAINER_ENGINE ?= $(shell command -v podman || command -v docker)
image:
	@test -n "$(CONTAINER_ENGINE)" || { echo "make image needs podman or docker"; exit 2; }
	$(CONTAINER_ENGINE) build -f Containerfile -t $(IMAGE) .
