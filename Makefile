# refdata — see README.md. Every target works on a fresh machine with Go and npm.
GO       ?= go
OAPI     := $(GO) run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
ADDR     ?= 127.0.0.1:8080
REDOCLY  := .lint/node_modules/.bin/redocly
# How the checks build (check-generate, vet, make test, make stress: the same flags,
# so they share one set of compiled packages): without cgo (the service is pure Go)
# and without DWARF (no one attaches a debugger to a test binary; stack traces and
# race reports do not use it). On a cold build cache that is 27 of 185 CPU-seconds
# of compiling (README § Tests). make build and make run build the default way.
CHECKBUILD := -gcflags=all=-dwarf=false -ldflags=-w
CHECKENV   := CGO_ENABLED=0

.PHONY: all help generate check-generate build run test test-race stress vet lint bench fuzz clean pg-start pg-stop

all: test

## help: list the targets, one line each
help:
	@sed -nE 's/^## ([a-z-]+): /\1|/p' $(MAKEFILE_LIST) | awk -F'|' '{printf "  %-15s %s\n", $$1, $$2}'

## generate: rewrite gen/ from openapi.yaml
generate:
	cd gen && $(OAPI) -config config.yaml ../openapi.yaml

## check-generate: fail when gen/ differs from what openapi.yaml generates
check-generate:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	sed "s#^output:.*#output: $$tmp/refdata.gen.go#" gen/config.yaml > $$tmp/config.yaml && \
	$(CHECKENV) $(GO) run $(CHECKBUILD) github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config $$tmp/config.yaml openapi.yaml && \
	if cmp -s $$tmp/refdata.gen.go gen/refdata.gen.go; then echo "gen/ is up to date"; \
	else echo "gen/ is out of date with openapi.yaml: run 'make generate' and commit"; exit 1; fi

## build: bin/refdata
build:
	$(GO) build -o bin/refdata ./cmd/refdata

## run: serve the embedded sample data on $(ADDR)
run:
	$(GO) run ./cmd/refdata serve --addr $(ADDR)

## vet: go vet and gofmt
vet:
	$(CHECKENV) $(GO) vet $(CHECKBUILD) ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# The PostgreSQL store's tests need a server: REFDATA_TEST_POSTGRES, or the
# cluster of make pg-start when it runs; without either they skip (CI sets
# REFDATA_REQUIRE_POSTGRES=1, which makes a skip a failure).
REFDATA_TEST_POSTGRES ?= $(shell tools/pg.sh url 2>/dev/null)
export REFDATA_TEST_POSTGRES

## pg-start: a throwaway PostgreSQL for the tests (tools/pg.sh; data in /tmp/refdata-pg-54329, port 54329)
pg-start:
	@tools/pg.sh start

## pg-stop: stop it
pg-stop:
	@tools/pg.sh stop

# The three test tiers (README § Tests). -short means: stress loops in their short
# form, bodies compressed at catalog.Fast; without it the same tests run full-size.
## test: generated code in sync, vet, gofmt, every test in its short form (no race detector; a few minutes)
# -vet=off: the vet target has just run every analyzer over every package and its
# tests; go test's own vet pass would repeat a subset (about 35 CPU-seconds cold).
test: check-generate vet
	$(CHECKENV) $(GO) test $(CHECKBUILD) -vet=off -short -count=1 -timeout 10m ./...

## test-race: every test in its short form under the race detector (vet is make test's part)
test-race:
	$(GO) test $(CHECKBUILD) -vet=off -race -short -count=1 -timeout 20m ./...

## stress: every test full-size (all crash points, more hot-swap readers, gzip/brotli at the served levels)
stress:
	$(CHECKENV) $(GO) test $(CHECKBUILD) -count=1 -timeout 30m ./...

$(REDOCLY): .lint/package.json .lint/package-lock.json
	cd .lint && npm ci --no-audit --no-fund
	@touch $@

## lint: go vet plus redocly (pinned in .lint/package.json) on openapi.yaml
lint: vet $(REDOCLY)
	$(REDOCLY) lint openapi.yaml

## fuzz: explore raw request bytes against the edge (the seed corpus runs in every go test)
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./edge -run '^$$' -fuzz FuzzRequest -fuzztime $(FUZZTIME)

## bench: the Go benchmarks (the nginx comparison is in BENCHMARKS.md)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## clean: remove bin/
clean:
	rm -rf bin

# Pages and clients, the npm-based tiers (issue 13). Each pins its tools in its own
# package.json + package-lock.json and installs them with npm ci.
.PHONY: test-browser test-ts redoc

browser/node_modules/.installed: browser/package.json browser/package-lock.json
	cd browser && npm ci --no-audit --no-fund
	@touch $@

## test-browser: the pages in Debian's chromium (apt-get install chromium), driven by playwright-core with axe-core; screenshots in browser/out/
test-browser: build browser/node_modules/.installed
	@test -x /usr/bin/chromium || { echo "test-browser needs /usr/bin/chromium: apt-get install chromium (never a downloaded browser)"; exit 1; }
	cd browser && REFDATA_BIN=$(CURDIR)/bin/refdata npm test

examples/ts/node_modules/.installed: examples/ts/package.json examples/ts/package-lock.json
	cd examples/ts && npm ci --no-audit --no-fund
	@touch $@

## test-ts: TypeScript types from openapi.yaml (openapi-typescript) and tsc --strict on examples/ts
test-ts: examples/ts/node_modules/.installed
	cd examples/ts && npm run check

## redoc: refresh the embedded Redoc bundle from npm (pinned in pages/vendor/redoc/VERSION)
redoc:
	pages/vendor/redoc/refresh.sh
