# Tollgate — the two commands: `make run` and `make test`. See README.md.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X tollgate/app.Version=$(VERSION)
TEST_MYSQL_DSN ?= root:@tcp(127.0.0.1:3306)/
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# Every Go package of ours; web/node_modules holds stray Go files from npm packages that must not be vetted.
PKGS = $$($(GO) list ./... | grep -v /node_modules/)

.PHONY: run build web web-deps test test-go test-go-sqlite test-go-mysql test-go-memory test-web test-e2e test-clients lint bench dev clean

## run: build the console and the binary, then serve on :3000 (SQLite + in-process cache under ./data)
run: build
	./tollgate

## build: the single binary ./tollgate with the console embedded
build: web
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o tollgate .

web-deps:
	@if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then \
		cd web && npm ci --no-audit --no-fund; fi

web: web-deps
	cd web && npm run build

## dev: Vite dev server proxying the API to a Go server on :3000 (run `go run .` in another shell)
dev: web-deps
	cd web && npm run dev

## test: formatting, vet, Go tests on SQLite+memory and on MariaDB+Redis, console checks, browser tests, and
## the real CLIs (Claude Code, Codex, Gemini CLI) when e2e/realclients/install.sh has installed them
test: lint test-go test-web test-e2e test-clients

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v /node_modules/)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

test-go: test-go-sqlite test-go-mysql test-go-memory

test-go-sqlite:
	@echo "== Go tests: SQLite + in-process cache =="
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

test-go-mysql:
	@if (exec 3<>/dev/tcp/127.0.0.1/3306) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then \
		echo "== Go tests: MariaDB + Redis =="; \
		TOLLGATE_TEST_MYSQL_DSN='$(TEST_MYSQL_DSN)' TOLLGATE_TEST_REDIS_URL='$(TEST_REDIS_URL)' REDIS_URL='$(TEST_REDIS_URL)' \
			$(GO) test -race -count=1 -timeout 30m $(PKGS); \
	else \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
		echo "!! SKIPPED: MariaDB (127.0.0.1:3306) or Redis (127.0.0.1:6379) is not reachable !!"; \
		echo "!! The MariaDB + Redis test pass did NOT run.                                  !!"; \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	fi

## test-go-memory: the tests that measure the process's RSS (names holding "RSS"), without -race, whose shadow
## memory makes RSS meaningless (the passes above skip them)
test-go-memory:
	@echo "== Go tests: memory (RSS) without the race detector =="
	$(GO) test -count=1 -timeout 15m -run RSS ./app/ ./relay/

test-web: web-deps
	cd web && npm run typecheck && npm run lint && npm test

## test-e2e: Playwright (Debian's Chromium) against the real binary on SQLite
test-e2e: build
	cd web && TOLLGATE_BIN=$(CURDIR)/tollgate npm run e2e

## bench: gateway vs a plain reverse proxy against the same fake upstream (see bench/main.go)
bench:
	$(GO) run ./bench $(BENCH_FLAGS)

clean:
	rm -rf tollgate web/dist/assets web/dist/index.html

## test-clients: real Claude Code, Codex CLI and Gemini CLI (npm) against a local Tollgate + fake upstream; SKIPPED
## when not installed (bash e2e/realclients/install.sh). REALCLIENTS_MODE=same: no translation. See the script.
test-clients:
	bash e2e/realclients/run.sh

.PHONY: seed-logs measure-logs
N ?= 10000000
LOGS_DSN ?= root:@tcp(127.0.0.1:3306)/tollgate_logbench
## seed-logs: (re)create the MariaDB database LOGS_DSN and fill it with N realistic usage log rows (bench/logs)
seed-logs:
	LOGS_DSN='$(LOGS_DSN)' $(GO) run ./bench/logs seed -n $(N)

## measure-logs: log pages, 30-day stats and 30-day retention on LOGS_DSN (retention deletes: seed again after)
measure-logs:
	LOGS_DSN='$(LOGS_DSN)' $(GO) run ./bench/logs measure $(MEASURE_FLAGS)
