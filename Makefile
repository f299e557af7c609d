# refdata — see README.md. Every target works on a fresh machine with Go and npm.
GO       ?= go
ADDR     ?= 127.0.0.1:8080
REDOCLY  := .lint/node_modules/.bin/redocly
# How everything here builds (run, build, check-generate, vet and the tests: the same
# flags, so they share one set of compiled packages, and make run warms the build
# cache for make test): without cgo (the service is pure Go; a static binary) and
# without DWARF (stack traces and race reports do not use it; nobody attaches a
# debugger to a test binary). On a cold build cache that is 27 of 185 CPU-seconds of
# compiling the tests. -race needs cgo, so make test-race keeps it.
BUILDFLAGS := -gcflags=all=-dwarf=false -ldflags=-w
BUILDENV   := CGO_ENABLED=0
# The packages whose tests run longest (they wait on the database and on scheduled
# switches) go first, so their waits overlap the compiling of the rest.
SLOWFIRST  := ./replica ./pipeline ./follow
# Tests write their stores under a tmpfs when the machine has one with 2 GiB free:
# every import fsyncs, and on disk that was a third of the pipeline tests' time
# (make test 165 s on disk, 140 s on /dev/shm; the tests' peak there is 0.7 GB).
TESTTMP    := $(shell d=/dev/shm; [ -d $$d ] && [ -w $$d ] && [ "$$(df -Pk $$d | awk 'NR==2{print $$4}')" -ge 2097152 ] && echo $$d)
TESTENV    := $(if $(TESTTMP),TMPDIR=$(TESTTMP))
OAPI       := $(BUILDENV) $(GO) run $(BUILDFLAGS) github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen

.PHONY: all help generate check-generate build run test test-short test-race stress test-proxy vet lint bench fuzz clean pg-start pg-stop image deploy-check

all: test

## help: list the targets, one line each
help:
	@sed -nE 's/^## ([a-z-]+): /\1|/p' $(MAKEFILE_LIST) | awk -F'|' '{printf "  %-15s %s\n", $$1, $$2}'

# handler's methods for the plain catalog routes (tools/handlergen; go:generate in handler).
HANDLERGEN := $(BUILDENV) $(GO) run $(BUILDFLAGS) ./tools/handlergen -spec openapi.yaml -catalog catalog/category.go

## generate: rewrite gen/ and handler/catalog_methods.gen.go from openapi.yaml
generate:
	cd gen && $(OAPI) -config config.yaml ../openapi.yaml
	$(HANDLERGEN) -out handler/catalog_methods.gen.go

## check-generate: fail when gen/ or handler/catalog_methods.gen.go differs from what openapi.yaml generates
check-generate:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	sed "s#^output:.*#output: $$tmp/refdata.gen.go#" gen/config.yaml > $$tmp/config.yaml && \
	$(OAPI) -config $$tmp/config.yaml openapi.yaml && \
	$(HANDLERGEN) -out $$tmp/catalog_methods.gen.go && \
	if cmp -s $$tmp/refdata.gen.go gen/refdata.gen.go && cmp -s $$tmp/catalog_methods.gen.go handler/catalog_methods.gen.go; then echo "gen/ and handler/catalog_methods.gen.go are up to date"; \
	else echo "gen/ or handler/catalog_methods.gen.go is out of date with openapi.yaml: run 'make generate' and commit"; exit 1; fi

## build: bin/refdata, stamped with its commit (refdata version; -buildvcs=auto wins over a GOFLAGS that turns stamping off)
build:
	$(BUILDENV) $(GO) build $(BUILDFLAGS) -buildvcs=auto -o bin/refdata ./cmd/refdata

# The container image: the static binary and nothing else, as a tarball written
# by deploy/image (go-containerregistry; no container engine needed).
IMAGE ?= refdata:latest

## image: bin/refdata-image.tar, the OCI image (one layer: /refdata, user 65532) for docker/podman load or crane push
image:
	deploy/image/build.sh bin/refdata-image.tar $(IMAGE)

## deploy-check: deploy/ checked without an engine or a cluster: systemd units, the image, compose, Kubernetes, the quick start (about 2 min)
deploy-check:
	deploy/check.sh

## run: build bin/refdata, then serve the embedded sample data on $(ADDR)
# The recipe execs the binary, so the server is make's own child: a SIGTERM to
# make reaches it (go run's child outlived a killed make).
run: build
	exec bin/refdata serve --addr $(ADDR)

## vet: go vet and gofmt
vet:
	$(BUILDENV) $(GO) vet $(BUILDFLAGS) ./...
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

# The three test tiers (README, Development). -short means: trimmed sample
# versions, fewer loops, bodies compressed at representation.Fast; without it the
# same tests run full-size.
## test: generated code in sync, vet, gofmt, every test in its short form (no race detector; about two minutes)
# vet first: it compiles what the tests and the generator share. Then the tests and
# check-generate side by side: the tests leave about a fifth of two cores idle
# (waiting on timers and the database), where the generator's own packages compile.
test: vet
	@$(MAKE) --no-print-directory -j2 check-generate test-short

# -vet=off: the vet target has just run every analyzer over every package and its
# tests; go test's own vet pass would repeat a subset (about 35 CPU-seconds cold).
# -p 4: four packages at once on two cores, since the slow ones spend much of their
# time waiting on timers, the database and the disk.
test-short:
	$(BUILDENV) $(TESTENV) $(GO) test $(BUILDFLAGS) -vet=off -short -count=1 -p 4 -timeout 10m $(SLOWFIRST) ./...

## test-race: every test in its short form under the race detector (vet is make test's part)
test-race:
	$(TESTENV) $(GO) test $(BUILDFLAGS) -vet=off -race -short -count=1 -timeout 20m $(SLOWFIRST) ./...

## stress: every test full-size (all crash points, more hot-swap readers, gzip/brotli at the served levels)
stress:
	$(BUILDENV) $(GO) test $(BUILDFLAGS) -count=1 -timeout 30m $(SLOWFIRST) ./...

## test-proxy: deploy/proxy's nginx and Varnish in front of two replicas through ten publishes under load (tools/proxy.sh installs them when missing)
# TestCachingProxy also runs in make stress where both engines are installed; here
# an engine that is missing fails it instead of skipping it.
test-proxy:
	tools/proxy.sh install
	REFDATA_REQUIRE_PROXY=1 $(BUILDENV) $(GO) test $(BUILDFLAGS) -v -count=1 -run '^TestCachingProxy$$' -timeout 10m ./cmd/refdata

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

# Pages and clients, the npm-based tiers. Each pins its tools in its own
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
