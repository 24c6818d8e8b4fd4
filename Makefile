# Thin front for CMake. The two commands of the README:
#   make demo   build and run the demo (GPU if present, CPU ranks otherwise)
#   make test   build and run the tests: plain, ASan+UBSan and TSan builds
# Other targets: build, bench, check (plain build's tests only), clean.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure

.PHONY: all build demo test check test-asan test-tsan bench clean

all: build

build:
	cmake -S . -B build -DDCUDA_WERROR=ON $(CMAKE_FLAGS)
	cmake --build build -j $(JOBS)

demo: build
	./build/apps/demo/dcuda_demo

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
TSAN_ENV = UCX_MEM_EVENTS=no
test-tsan:
	cmake -S . -B build-tsan -DDCUDA_SANITIZE=thread -DDCUDA_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && $(TSAN_ENV) ctest $(CTEST_FLAGS) -L cpu -j $(JOBS)
	cd build-tsan && $(TSAN_ENV) TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan-mpi.supp" ctest $(CTEST_FLAGS) -L net -LE cpu -j $(JOBS)

test: check test-asan test-tsan

bench: build
	./build/bench/dcuda_bench

clean:
	rm -rf build build-asan build-tsan
