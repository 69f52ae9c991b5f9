# Two commands on a fresh machine: `make demo` (set up, then run the main job with the Dagster UI) and
# `make test` (set up, then run the suite). Both build their own virtualenv; neither needs Docker, a system
# Postgres or a system tesseract.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DIR ?= .stage_e/demo
DEMO_PRINTINGS ?= 2000
DEMO_CARDS ?= 400
export OMP_THREAD_LIMIT := 1
# The demo runs the UI, the daemon and OCR on one small machine: let the envelope's host-load bar sit at twice the
# CPU count instead of the production default (usable cores), or a 2-core laptop halts the stream at once.
DEMO_LOAD_CEILING ?= $(shell echo $$(( $$(nproc) * 2 )))

.PHONY: install test demo lint bench clean-data

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

test: install
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check stage_e_dagster tests bench

demo: install
	@test -f $(DEMO_DIR)/catalog.json || $(BIN)/stage-e demo generate --printings $(DEMO_PRINTINGS) --cards $(DEMO_CARDS) --out $(DEMO_DIR)
	$(BIN)/stage-e catalog import $(DEMO_DIR)/catalog.json --symbols $(DEMO_DIR)/symbols
	$(BIN)/stage-e ingest $(DEMO_DIR)/scans --source demo
	STAGE_E_HOST_LOAD_CEILING=$${STAGE_E_HOST_LOAD_CEILING:-$(DEMO_LOAD_CEILING)} \
	STAGE_E_SWEEP_CRON="$${STAGE_E_SWEEP_CRON:-*/5 * * * *}" $(BIN)/stage-e dev

bench: install
	for script in bench/*.py; do $(BIN)/python $$script || exit 1; done

clean-data:
	-$(BIN)/stage-e postgres stop
	rm -rf .stage_e
