# fairway — make targets. `make help` lists them.
GO        ?= go
PKGS      ?= ./...
BENCHTIME ?= 2s

.PHONY: help build test test-race test-short skipped lint fmt bench sim verify

# SAY_SKIPPED prints one line naming the tests this machine skips, and how
# to run them: the PostgreSQL tests without FAIRWAY_TEST_POSTGRES_URL, the
# web UI's browser tests without Chromium on PATH. CI (.ci/run) provides
# both and makes their absence a failure (FAIRWAY_REQUIRE_POSTGRES=1,
# FAIRWAY_REQUIRE_BROWSER=1), so it skips nothing and this says nothing.
SAY_SKIPPED = skipped=""; \
	if [ -z "$$FAIRWAY_TEST_POSTGRES_URL" ] && [ "$$FAIRWAY_REQUIRE_POSTGRES" != 1 ]; then \
	  skipped="the PostgreSQL tests (run them with FAIRWAY_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable make test)"; fi; \
	if [ "$$FAIRWAY_REQUIRE_BROWSER" != 1 ] && ! command -v chromium >/dev/null 2>&1 && \
	  ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then \
	  browser="the web UI's browser tests (install Chromium to run them: apt-get install chromium)"; \
	  skipped="$${skipped:+$$skipped and }$$browser"; fi; \
	if [ -n "$$skipped" ]; then echo "make test: skipped $$skipped; CI (.ci/run) runs every test"; fi

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build ./bin/fairway
	@echo "building bin/fairway (the first build compiles SQLite, cgo: about 3 minutes on 2 cores; later ones take seconds)"
	$(GO) build -o bin/fairway ./cmd/fairway

test: test-race ## run every test with the race detector (what CI runs)

test-race: ## go test -race over the module
	@echo "$(GO) test -race -count=1 -timeout 20m $(PKGS)"
	@$(GO) test -race -count=1 -timeout 20m $(PKGS); rc=$$?; $(SAY_SKIPPED); exit $$rc

test-short: ## quick tests without the race detector
	@echo "$(GO) test -short -count=1 $(PKGS)"
	@$(GO) test -short -count=1 $(PKGS); rc=$$?; $(SAY_SKIPPED); exit $$rc

skipped: ## say which tests this machine skips (PostgreSQL, browser) and how to run them
	@$(SAY_SKIPPED)

lint: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fmt: ## gofmt the tree
	gofmt -w $$(git ls-files '*.go')

bench: ## engine decision benchmarks (1k, 100k, 1M pending)
	$(GO) test -run '^$$' -bench 'Decision' -benchtime $(BENCHTIME) ./internal/policy/

sim: build ## run every bundled scenario through the simulator (summary only)
	@for f in scenarios/seed*.yaml; do echo "== $$f"; ./bin/fairway sim --quiet $$f || exit 1; done

verify: lint test ## lint and test
