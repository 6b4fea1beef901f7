# Developer shortcuts. `make dev` builds the native extension in place so that
# `PYTHONPATH=src` runs the package from the working tree; `make test` runs the suite.
PYTHON ?= python3
BUILD ?= build/dev
JOBS ?= 2

.PHONY: dev test clean

dev:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$$(command -v $(PYTHON)) -DTFRX_SANITIZE="$(TFRX_SANITIZE)" >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	@# Copy, then rename over the old file: a process that has the old extension loaded keeps its mapping.
	for f in $(BUILD)/_native*.so; do cp $$f src/tfrx/.$$(basename $$f).new && mv -f src/tfrx/.$$(basename $$f).new src/tfrx/$$(basename $$f); done
	-cp $(BUILD)/_native.pyi src/tfrx/ 2>/dev/null

test: dev
	PYTHONPATH=src $(PYTHON) -m pytest -q

clean:
	rm -rf $(BUILD) src/tfrx/_native*.so src/tfrx/_native.pyi
