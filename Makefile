# The two commands of the README are `make demo` and `make test`; the rest
# are their parts.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
GO ?= go
BINS := swd hostd bcfabd lab xdpfwd rperf

.PHONY: all build deps demo test test-unit generate check-generate bench clean vet

all: build

deps:
	./scripts/install-deps.sh

# The binaries name their build (internal/buildinfo): the Go tool stamps
# the VCS revision itself in a plain checkout; these flags give it where it
# cannot (a git worktree, GOFLAGS=-buildvcs=false).
VCS_REV := $(shell git rev-parse HEAD 2>/dev/null)
VCS_TIME := $(shell git log -1 --format=%cI 2>/dev/null)
VCS_MOD := $(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true || echo false)
BUILDINFO := github.com/bcfab/bcfab/internal/buildinfo
LDFLAGS := -X $(BUILDINFO).revision=$(VCS_REV) -X $(BUILDINFO).vcsTime=$(VCS_TIME) -X $(BUILDINFO).modified=$(VCS_MOD)

build:
	@mkdir -p bin
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ $(addprefix ./cmd/,$(BINS))

# Bring up a small BCube, push traffic across a relayed path, tear it down.
demo: deps build
	./scripts/demo.sh

# Everything: unit tests, fabric-in-process tests, and the privileged tier
# (namespaces, veth, AF_XDP, eBPF) when run as root. One package at a
# time (-p 1): the real-lab tests of lab and bench each load both cores
# with dozens of daemons, and running them side by side would measure the
# machine's overload, not the fabric.
test: deps build vet check-generate
	$(GO) test -p 1 -count=1 -timeout 20m ./...

test-unit: build
	$(GO) test -count=1 -short ./...

# Vet for Linux and for another OS: the portable packages (planning, lab
# files, reports, tools' clients) and their tests must build where a lab
# cannot run, so a test that uses a Linux-only type fails here, not on a
# user's laptop.
vet:
	GOOS=linux $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

# Regenerate the eBPF objects (needs clang); the result is committed.
generate:
	$(GO) generate ./bpf

check-generate: generate
	git diff --exit-code -- bpf || (echo "bpf: generated files differ from the committed ones; run make generate and commit" >&2; exit 1)

bench: build
	sudo -n true 2>/dev/null || [ "$$(id -u)" = 0 ]
	$(GO) test -run '^$$' -bench . -benchmem ./queues ./wire/header ./fabric/bcube ./xdp
	./bin/lab bench datapath

clean:
	rm -rf bin
