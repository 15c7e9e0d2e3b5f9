"""Shared fixtures of the virtual-time fabric tests."""

from __future__ import annotations

import pytest

from controller.pipeline import Pipeline, compile_fabric


@pytest.fixture(scope="session")
def fabric_pipeline(tmp_path_factory) -> Pipeline:
    """fabric.p4 compiled for our target, once per test session."""
    return compile_fabric("ours", tmp_path_factory.mktemp("fabric-build"))
