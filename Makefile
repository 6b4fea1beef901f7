# Developer shortcuts. `make dev` builds the native extension in place so that
# `PYTHONPATH=src` runs the package from the working tree; `make test` runs the suite,
# `make test-fast` all but the tests marked slow; `make lint` runs ruff (lint and format check), mypy and the layer check (docs/development.md).
PYTHON ?= python3
BUILD ?= build/dev
# RelWithDebInfo keeps the symbols (nanobind strips a Release build), for `perf report` on the native core.
BUILD_TYPE ?= Release
JOBS ?= 2

.PHONY: dev test test-fast lint lint-native clean build-deps

# What `make dev` needs besides a C++17 compiler and zlib's headers: nanobind in $(PYTHON), cmake and ninja on PATH.
# Checked first so that a fresh venv gets the command to run instead of a CMake error.
build-deps:
	@$(PYTHON) -c "import nanobind" 2>/dev/null || { \
		echo "make dev: nanobind is not installed in $(PYTHON); install the build requirements with" >&2; \
		echo "  $(PYTHON) -m pip install 'nanobind>=2.4' cmake ninja" >&2; \
		echo "(or build and install tfrx with '$(PYTHON) -m pip install .', which fetches them itself)" >&2; \
		exit 1; }
	@for tool in cmake ninja; do command -v $$tool >/dev/null 2>&1 || { \
		echo "make dev: $$tool is not on PATH; install it with '$(PYTHON) -m pip install cmake ninja'" \
		     "(then activate the environment) or your system's package manager" >&2; \
		exit 1; }; done

dev: build-deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DPython_EXECUTABLE=$$(command -v $(PYTHON)) -DTFRX_SANITIZE="$(TFRX_SANITIZE)" >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	@# Copy, then rename over the old file: a process that has the old extension loaded keeps its mapping.
	for f in $(BUILD)/_native*.so; do cp $$f src/tfrx/.$$(basename $$f).new && mv -f src/tfrx/.$$(basename $$f).new src/tfrx/$$(basename $$f); done
	-cp $(BUILD)/_native.pyi src/tfrx/ 2>/dev/null

test: dev
	PYTHONPATH=src $(PYTHON) -m pytest -q

test-fast: dev
	PYTHONPATH=src $(PYTHON) -m pytest -q -m "not slow"

# mypy reads src/tfrx/_native.pyi, which `make dev` generates.
lint:
	$(PYTHON) -m ruff check src tests benchmarks examples fuzz
	$(PYTHON) -m ruff format --check src tests benchmarks examples fuzz
	$(PYTHON) -m mypy
	PYTHONPATH=src lint-imports --no-cache

# C++ functions past cyclomatic complexity 15 or 120 lines fail, except those listed with a reason in
# src/native/.lizard-allow (docs/architecture.md, "Complexity limits").
lint-native:
	$(PYTHON) -m lizard -C 15 -L 120 -w -W src/native/.lizard-allow src/native

clean:
	rm -rf $(BUILD) src/tfrx/_native*.so src/tfrx/_native.pyi
