# fairway — make targets. `make help` lists them.
GO        ?= go
PKGS      ?= ./...
BENCHTIME ?= 2s

.PHONY: help build test test-race test-short lint fmt bench sim verify

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build ./bin/fairway
	@echo "building bin/fairway (the first build compiles SQLite, cgo: about 3 minutes on 2 cores; later ones take seconds)"
	$(GO) build -o bin/fairway ./cmd/fairway

test: test-race ## run every test with the race detector (what CI runs)

test-race: ## go test -race over the module
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

test-short: ## quick tests without the race detector
	$(GO) test -short -count=1 $(PKGS)

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
