# Two commands on a fresh machine: `make demo` (set up, then run the main job with the Dagster UI) and
# `make test` (set up, then run the suite). Both build their own virtualenv; neither needs Docker, a system
# Postgres or a system tesseract. `make test-quick` skips the live and drill tests (the inner loop);
# `make breakages` proves the suite catches deliberate breakages, `make mutants` that the pure core's tests kill its
# mutants (docs/testing.md).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DIR ?= .stage_e/demo
DEMO_PRINTINGS ?= 2000
DEMO_CARDS ?= 400
# The demo's scans arrive in the watched inbox in waves of DEMO_WAVE every DEMO_WAVE_SECONDS while Dagster runs.
DEMO_WAVE ?= 50
DEMO_WAVE_SECONDS ?= 20
# The suite runs in three pytest workers on two cores: live and drill tests spend much of their time waiting on
# Dagster's daemon, and a third worker fills those waits (docs/testing.md has the figures for two and three).
# Every worker has its own Postgres, databases and homes.
TEST_WORKERS ?= 3

.PHONY: install test test-quick breakages mutants demo lint bench clean-data

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

test: install
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist load --maxschedchunk 1

test-quick: install
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist load --maxschedchunk 1 -m "not live and not drill"

breakages: install
	$(BIN)/python tools/breakages.py

# Mutation testing of the pure core (tools/mutants.py, [tool.mutmut] in pyproject.toml); not part of `make test`.
mutants: install
	$(BIN)/python tools/mutants.py

lint: install
	$(BIN)/ruff check stage_e_dagster tests bench drills testkit tools

# Ctrl-C stops everything `make demo` started: Dagster, the inbox feeder, and the embedded Postgres unless it was
# already running before (its setup steps start it, so `stage-e dev` is told with --stop-postgres).
demo: install
	@if $(BIN)/stage-e postgres status >/dev/null 2>&1; then stop=; else stop=--stop-postgres; fi; \
	cleanup() { [ -z "$$stop" ] || $(BIN)/stage-e postgres stop >/dev/null 2>&1; }; \
	trap 'cleanup; exit 130' INT TERM; \
	{ test -f $(DEMO_DIR)/catalog.json || $(BIN)/stage-e demo generate --printings $(DEMO_PRINTINGS) \
		--cards $(DEMO_CARDS) --out $(DEMO_DIR); } && \
	$(BIN)/stage-e catalog import $(DEMO_DIR)/catalog.json --symbols $(DEMO_DIR)/symbols \
		$$(test -f $(DEMO_DIR)/sets.json && echo --sets $(DEMO_DIR)/sets.json) && \
	mkdir -p $(DEMO_DIR)/inbox && \
	$(BIN)/stage-e sources add $(DEMO_DIR)/inbox --key demo || { cleanup; exit 1; }; \
	trap - INT TERM; \
	STAGE_E_SWEEP_CRON="$${STAGE_E_SWEEP_CRON:-*/5 * * * *}" exec $(BIN)/stage-e dev $$stop \
		--feed $(DEMO_DIR)/scans --feed-into $(DEMO_DIR)/inbox --feed-wave $(DEMO_WAVE) --feed-every $(DEMO_WAVE_SECONDS)

bench: install
	for script in bench/*.py; do $(BIN)/python $$script || exit 1; done

clean-data:
	-$(BIN)/stage-e postgres stop
	rm -rf .stage_e
