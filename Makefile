# The two commands of the README, and a few for contributors. `make help` lists them.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
SITE   := _build/html
# Which torch build to install: cpu (default; PyTorch's CPU-only index on Linux, falling back to
# the default index where it cannot be reached) or default (the default index: CUDA on Linux).
TORCH_INDEX ?= cpu

.PHONY: help book test outputs serve clean

help:
	@echo "make book                     install everything (once) and build the site into $(SITE)"
	@echo "                              (TORCH_INDEX=default: torch's default build, CUDA on Linux)"
	@echo "make test                     run the whole test suite (strict nbval, unit tests, -W build, lint)"
	@echo "make outputs NB=book/X.ipynb  re-execute a chapter and store its fresh outputs"
	@echo "make serve                    serve the built site on http://127.0.0.1:8000/"
	@echo "make clean                    remove the build and the virtual environment"

book: $(VENV)/installed graphviz
	@echo "==> Building the site from the stored outputs, warnings as errors"
	rm -rf _build
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The site is in $(SITE)/ (start at $(SITE)/index.html). To read it in a browser:"
	@echo "    make serve     # serves $(SITE) on http://127.0.0.1:8000/"

test: $(VENV)/installed graphviz
	@echo "==> Running the test suite: every chapter under strict nbval, the helper's unit tests,"
	@echo "    the site build with warnings as errors, and the workflow lint"
	$(BIN)/python -m pytest

outputs: $(VENV)/installed graphviz
	@test -n "$(NB)" || { echo "usage: make outputs NB=book/<chapter>.ipynb"; exit 2; }
	$(BIN)/python tools/run_notebook.py $(NB)

serve:
	@test -f $(SITE)/index.html || { echo "No site yet: run 'make book' first."; exit 1; }
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory $(SITE)

clean:
	rm -rf _build $(VENV)

$(VENV)/installed: requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) is missing. On Debian/Ubuntu: sudo apt-get install python3.11 python3.11-venv"; exit 1; }
	@echo "==> Creating the virtual environment $(VENV) and installing requirements.txt (a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	torch_index=$$(sh tools/torch-index.sh $(TORCH_INDEX)) && \
	    $(BIN)/python -m pip install --progress-bar off $$torch_index -r requirements.txt
	@touch $@

graphviz:
	@sh tools/ensure-graphviz.sh
