# One entry point for users and CI. Every target installs what it needs on a fresh Debian
# machine (apt packages, a virtual environment, pip packages) and is idempotent.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_APT := $(VENV)/.apt-stamp
STAMP_PIP := $(VENV)/.pip-stamp
APT_PACKAGES := mininet iputils-ping ethtool bridge-utils iproute2 tshark cpp libnanomsg5 iperf3 valgrind python3-dev

.PHONY: all setup lint test test-unit bench ptf run clean

all: test

$(STAMP_APT):
	@mkdir -p $(VENV)
	@if [ "$$(id -u)" = 0 ]; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	  if [ -n "$$missing" ]; then apt-get update -qq && apt-get install -y -qq $$missing; fi; \
	else echo "not root: skipping apt packages ($(APT_PACKAGES))"; fi
	@touch $@

$(STAMP_PIP): requirements.txt pyproject.toml $(STAMP_APT)
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	@# p4runtime-shell's metadata pins protobuf<3.21; its real dependencies are in requirements.txt.
	$(PY) -m pip install -q --no-deps p4runtime-shell==0.0.6
	$(PY) -m pip install -q --no-deps -e .
	$(PY) -m p4rt.gencode
	@# Mininet is a Debian package for the system Python; expose just that package to the venv.
	@if [ -d /usr/lib/python3/dist-packages/mininet ]; then \
	  site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  ln -sfn /usr/lib/python3/dist-packages/mininet $$site/mininet; fi
	@touch $@

setup: $(STAMP_PIP)
	@# fabric.p4 and the per-packet modules of the clock and wire formats, the switch, the NIC model and the simulator
	@# compiled to C by mypyc (p4switch/exec/native.py, netbase/hotpath.py), so that they run so from the
	@# start (the default backend, auto, runs what is built); a no-op once built
	@$(PY) -m p4switch.exec.prebuild p4src/fabric.p4 >/dev/null || \
	  echo "note: fabric.p4 or the per-packet modules could not be compiled to C (above); they run Python"

lint: setup
	$(VENV)/bin/ruff check .

# Everything: lint, unit, STF, PTF, live and Mininet tests (the `net` ones need root).
test: lint
	$(PY) -m pytest -q --durations=15 tests

# The fast subset: no root, veths, Mininet or switch processes, no corpora (markers in pyproject.toml).
test-unit: setup
	$(PY) -m pytest -q -m "not net and not slow" tests

bench: setup
	$(PY) -m bench

ptf: setup
	$(PY) -m ptf_tests.harness

run: setup
	$(PY) -m controller.run_demo

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
