# kiln's entry points: `make demo` and `make test` (README's quick start). CMake does the work.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
# Ninja where it is installed (it starts a target's files before the libraries they link are done,
# where make waits for them), for a build folder that has no generator yet: CMake refuses to change
# the generator of one it configured.
NINJA := $(shell command -v ninja >/dev/null 2>&1 && echo -G Ninja)
generator = $(if $(wildcard $(1)/CMakeCache.txt),,$(NINJA))

.PHONY: all configure demo test sanitize-build test-sanitize test-consumer fuzz planted-bugs format format-check bench clean

all: configure
	cmake --build $(BUILD) -j$(JOBS)

configure:
	cmake -S . -B $(BUILD) $(call generator,$(BUILD)) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

# Builds the kiln tool and runs the demo on the default device (CUDA if present, else the CPU).
demo: configure
	cmake --build $(BUILD) -j$(JOBS) --target kiln_tool
	$(BUILD)/bin/kiln demo

# Builds everything and runs every test.
test: all
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# The tests again under AddressSanitizer and UndefinedBehaviorSanitizer, each folder's executable
# in a few processes rather than one per case (tests/CMakeLists.txt says why, and which cases the
# sanitized run leaves to `make test`). Line tables only (-g1: reports keep files and lines) and no
# kiln tool (its benchmarks are not tests; its argument errors run in `make test`): the build is
# most of CI's time.
# The CUDA backend's tests (label backends/cuda) run without the leak check: at exit GCC 12's
# LeakSanitizer walks the dynamic thread-local storage of the NVRTC those tests load, reads a bogus
# range and crashes (`Tracer caught signal 11`, `DTLS 6 at 0x...100a-0x...210c`) after the test
# passed, depending on memory layout. ASan and UBSan still check every access there.
NO_LEAK_CHECK = backends/cuda
# Clang 14 where it is installed: it builds the instrumented tests three times as fast as GCC 12
# (3.95 s against 12.05 s for tests/tensor/ops_test.cpp), and so a second compiler checks kiln. The
# compiler is chosen for a build folder that has none yet, as the generator is.
SANITIZE_CXX ?= $(shell command -v clang++-14 2>/dev/null)
sanitize_compiler = $(if $(wildcard $(ASAN_BUILD)/CMakeCache.txt),,$(if $(SANITIZE_CXX),-DCMAKE_CXX_COMPILER=$(SANITIZE_CXX)))
sanitize-build:
	cmake -S . -B $(ASAN_BUILD) $(call generator,$(ASAN_BUILD)) $(sanitize_compiler) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
		-DKILN_SANITIZE=ON -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_TOOLS=OFF $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j$(JOBS)

test-sanitize: sanitize-build
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir $(ASAN_BUILD) --output-on-failure -j$(JOBS) -LE '$(NO_LEAK_CHECK)'
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir $(ASAN_BUILD) --output-on-failure -j$(JOBS) -L '$(NO_LEAK_CHECK)'

# kiln as a dependency of an outside project: installed and found with find_package, added with
# add_subdirectory, fetched with FetchContent (tests/consumer/run.sh; its own build folders).
# CONSUMER_INSTALL_FROM (CI: the main build folder, built already) spares the installed package a
# build of its own; the other two consumers build kiln with clang 14 where it is (what is checked is
# how kiln builds as a dependency, and clang builds it the quickest).
test-consumer:
	JOBS=$(JOBS) KILN_INSTALL_FROM=$(CONSUMER_INSTALL_FROM) KILN_CONSUMER_CXX=$(SANITIZE_CXX) tests/consumer/run.sh

# The differential fuzzer (docs/fuzz.md) past CTest's fixed seeds: from FUZZ_SEED, FUZZ_COUNT
# SIMT programs and a tenth as many tile programs and tensor chains, the evaluators against the
# CPU backend.
FUZZ_SEED ?= 1
FUZZ_COUNT ?= 20000
fuzz: all
	for f in simt:$(FUZZ_COUNT) tile:$$(($(FUZZ_COUNT) / 10)) tensor:$$(($(FUZZ_COUNT) / 10)); do \
		$(BUILD)/bin/kiln_fuzz --family $${f%%:*} --seed $(FUZZ_SEED) --count $${f##*:} --device cpu \
			--out $(BUILD)/fuzz-out --known tests/fuzz/known_mismatches.txt || exit 1; \
	done

# Bugs planted in kiln one at a time (tests/fuzz/planted_bugs.sh): CTest's fixed fuzz seeds must
# catch each.
planted-bugs: all
	JOBS=$(JOBS) tests/fuzz/planted_bugs.sh $(BUILD)

# Every C++ file laid out as .clang-format says: `make format` rewrites them, `make format-check`
# (a CI phase) fails naming each file that differs. clang-format 14, the one Debian 12 ships: other
# versions lay some constructs out differently, so CI pins it.
CLANG_FORMAT ?= $(shell command -v clang-format-14 2>/dev/null || command -v clang-format 2>/dev/null)
FORMATTED = git ls-files '*.cpp' '*.h' '*.cuh' '*.cu'
format:
	@test -n "$(CLANG_FORMAT)" || { echo "format: no clang-format-14 (apt install clang-format-14)"; exit 1; }
	$(FORMATTED) | xargs $(CLANG_FORMAT) -i
format-check:
	@test -n "$(CLANG_FORMAT)" || { echo "format-check: no clang-format-14 (apt install clang-format-14)"; exit 1; }
	@$(FORMATTED) | xargs $(CLANG_FORMAT) --dry-run -Werror && echo "format-check: $$($(FORMATTED) | wc -l) files as .clang-format lays them out"

# CPU benchmarks (Google Benchmark).
bench: all
	$(BUILD)/bin/kiln_cpu_bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
