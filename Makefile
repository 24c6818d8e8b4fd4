# Thin front for CMake. The two commands of the README:
#   make demo   build what the demo needs and run it (GPU if present, CPU
#               ranks otherwise: then without CUDA, in build-demo/)
#   make test   build and run the tests: plain, ASan+UBSan and TSan builds,
#               then the libFuzzer harnesses briefly and the Python package
#               (pip install . into build-py/venv, its pytest suite)
# Other targets: build, bench, references, check (plain build's tests only),
# plots, fuzz, api (docs/api.md from the public headers), clean.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure

.PHONY: all build demo test check test-asan test-tsan fuzz test-fuzz test-python bench references plots api clean

all: build

build:
	cmake -S . -B build -DDCUDA_WERROR=ON $(CMAKE_FLAGS)
	cmake --build build -j $(JOBS)

# The demo builds only what it needs: the library, its plugins and the demo
# with its rank code; for the GPU when one is present (in build/), else for
# CPU ranks alone (in build-demo/, without nvcc's forms of the rank code).
HAVE_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo 1)
DEMO_DIR := $(if $(HAVE_GPU),build,build-demo)
DEMO_FLAGS := $(if $(HAVE_GPU),,-DDCUDA_WITH_CUDA=OFF -DDCUDA_BUILD_TESTS=OFF)
demo:
	cmake -S . -B $(DEMO_DIR) -DDCUDA_WERROR=ON $(DEMO_FLAGS) $(CMAKE_FLAGS)
	cmake --build $(DEMO_DIR) -j $(JOBS) --target dcuda_demo
	./$(DEMO_DIR)/apps/demo/dcuda_demo

check: build
	cd build && ctest $(CTEST_FLAGS) -j $(JOBS)

# Sanitizer builds run the CPU-rank tests; CUDA code is compiled by the plain build.
test-asan:
	cmake -S . -B build-asan -DDCUDA_SANITIZE=address -DDCUDA_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest $(CTEST_FLAGS) -L cpu -j $(JOBS)

# ThreadSanitizer also runs the network-path suites (under mpirun), where the
# proxy writes what ranks read; Open MPI's own findings are suppressed.
# UCX's memory hooks (libucm patches mmap and madvise as it loads, in every
# program linked with UCX) crash under ThreadSanitizer when a thread ends:
# this run turns them off (the UCX manager over TCP does not use them).
# Entries labelled tsan_blind are left out: orders that run through another
# process's rank are invisible to it (tests/CMakeLists.txt says which).
# The network-path phase takes the loopback forms (every rank, proxy lane
# and manager thread of the network path in one process, where TSan sees
# every order between them) and the two-process forms of the suites that
# have no loopback form and run threads of their own beside the proxy (host
# threads, aborts, routes, the host's commands); the plain build runs every
# form (all of them under TSan ran a 2-core CI past its time).
TSAN_ENV = UCX_MEM_EVENTS=no
TSAN_NET_TESTS = ^(lanes\.)?loop\.|^net\.(mpi|ucx)\.(threads|hostcmd|integration|routes|stress)\..*n?p2$$
test-tsan:
	cmake -S . -B build-tsan -DDCUDA_SANITIZE=thread -DDCUDA_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && $(TSAN_ENV) ctest $(CTEST_FLAGS) -L cpu -LE tsan_blind -j $(JOBS)
	cd build-tsan && $(TSAN_ENV) TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan-mpi.supp" ctest $(CTEST_FLAGS) -L net -LE "cpu|scale" -R '$(TSAN_NET_TESTS)' -j $(JOBS)

# The Python package (python/, pyproject.toml): `pip install .` into a
# virtual environment of its own (build-py/venv; scikit-build-core drives the
# project's CMake, without tests or programs: the library in Release, here
# with warnings as errors, the one -O3 build of make test), with pytest and
# mpi4py, then its suite (python/tests) against the installed package: CPU
# ranks in one process, forked, under mpirun, over the network path, with an
# mpi4py communicator. The examples' rank code is built into build-py/cache.
test-python:
	python3 -m venv build-py/venv
	build-py/venv/bin/pip install --quiet --disable-pip-version-check \
	  --config-settings=cmake.define.DCUDA_WERROR=ON ".[test,mpi]"
	cd build-py && DCUDAPY_CACHE_DIR=$(CURDIR)/build-py/cache \
	  venv/bin/python -m pytest -q -rs $(CURDIR)/python/tests

# libFuzzer runs of the fuzz harnesses (tests/fuzz, docs/fuzzing.md): a
# clang build of their own (build-fuzz: ASan+UBSan, no CUDA, MPI or UCX),
# each harness FUZZ_SECONDS from its seeds; what it learns stays in
# build-fuzz/corpus for the next run, what crashes in build-fuzz/crashes.
FUZZ_SECONDS ?= 20
FUZZ_CC ?= clang
FUZZ_CXX ?= clang++
FUZZ_HARNESSES = settings logfmt cmd wire
FUZZ_FLAGS = -timeout=30 -print_final_stats=1
fuzz:
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=$(FUZZ_CC) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) \
	  -DDCUDA_FUZZ=ON -DDCUDA_WITH_CUDA=OFF -DDCUDA_WITH_MPI=OFF -DDCUDA_WITH_UCX=OFF \
	  -DDCUDA_WERROR=ON $(CMAKE_FLAGS)
	cmake --build build-fuzz -j $(JOBS) --target \
	  $(foreach h,$(FUZZ_HARNESSES),dcuda_fuzz_$(h) dcuda_fuzz_$(h)_replay)
	@set -e; cd build-fuzz; for h in $(FUZZ_HARNESSES); do \
	  mkdir -p corpus/$$h seeds/$$h crashes; \
	  tests/fuzz/dcuda_fuzz_$${h}_replay --write-seeds seeds/$$h --write-dict $$h.dict; \
	  dict=; [ -s $$h.dict ] && dict=-dict=$$h.dict; \
	  echo "fuzz: $$h, $(FUZZ_SECONDS) s"; \
	  if ! tests/fuzz/dcuda_fuzz_$$h -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) $$dict \
	      -artifact_prefix=crashes/$$h- corpus/$$h seeds/$$h > $$h.log 2>&1; then \
	    tail -n 80 $$h.log; echo "fuzz: $$h FAILED (build-fuzz/$$h.log, build-fuzz/crashes)"; \
	    exit 1; \
	  fi; \
	  grep -E "^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec)" $$h.log; \
	done

# make test's fuzz step: every harness briefly. Where clang cannot build
# libFuzzer binaries it says so and skips, unless FUZZ_REQUIRED=1 (CI).
FUZZ_TEST_SECONDS ?= 15
FUZZ_REQUIRED ?= 0
test-fuzz:
	@probe=$$(mktemp -d); \
	echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' \
	  > $$probe/probe.c; \
	if $(FUZZ_CC) -fsanitize=fuzzer $$probe/probe.c -o $$probe/probe > /dev/null 2>&1; then \
	  rm -rf $$probe; $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_TEST_SECONDS); \
	elif [ "$(FUZZ_REQUIRED)" = 1 ]; then \
	  rm -rf $$probe; echo "fuzz: $(FUZZ_CC) cannot build libFuzzer binaries"; exit 1; \
	else \
	  rm -rf $$probe; echo "fuzz: SKIPPED: $(FUZZ_CC) cannot build libFuzzer binaries" \
	    "(Debian: apt-get install clang libclang-rt-dev)"; \
	fi

test: check test-asan test-tsan test-fuzz test-python

bench: build
	./build/bench/dcuda_bench

# The reference programs beside the benchmark (a GPU build: the raw floors;
# with NVSHMEM found, NVSHMEM's figures too), run and compared with
# dcuda_bench's rows by tools/references.sh (docs/results/README.md).
references: build
	cmake --build build -j $(JOBS) --target dcuda_references

# The case studies at their smallest sizes and their figures, under
# build/plots (python3 with matplotlib: tools/requirements.txt).
plots: build
	mkdir -p build/plots
	python3 tools/case_studies.py --build build --small --rounds 1 --csv build/plots/cases.csv
	python3 tools/plot_results.py --cases build/plots/cases.csv --out build/plots

# The API reference, docs/api.md: every public function, type, status code
# and setting with its comment, from the public headers and the settings
# table (python3; ctest docs.api fails when it is stale or a name has no
# comment).
api:
	python3 tools/api_ref.py

clean:
	rm -rf build build-demo build-asan build-tsan build-fuzz build-py
