# One command to set up and run, one to test. Each sets itself up on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
SYSTEM_PACKAGES := bubblewrap chromium libseccomp2 g++ cmake binutils

.PHONY: run test lint system-deps venv clean deploy-check

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Debian packages the judge and the browser tests need; installed when missing and we may (root).
system-deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (run as root or install them; tests that need them skip)"; fi; \
	fi

run: system-deps venv
	$(VENV)/bin/opjudge serve --host 127.0.0.1 --port 8000 --seed-demo --judge-baselines

# pytest-xdist: one worker per core (TEST_WORKERS=0 runs in one process); the modules that start
# services run whole on one worker (tests/conftest.py, ONE_WORKER_MODULES).
TEST_WORKERS ?= auto

test: system-deps venv
	$(VENV)/bin/ruff check judge api workers tests bench problems
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# Builds the images, runs the compose stack and judges in it (bench/deploy_check.sh; needs Docker,
# takes minutes; not part of `make test`).
deploy-check:
	bench/deploy_check.sh

lint: venv
	$(VENV)/bin/ruff check judge api workers tests bench problems

clean:
	rm -rf $(VENV) var build
