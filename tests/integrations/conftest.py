"""The adapters' tests need their hosts' packages, so they are collected only when their
marker is selected (``pytest -m integrations``, ``pytest -m hermes``): the main run,
which deselects them, does not import them at all, and so neither skips nor fails on a
host that is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

MARKERS = {"test_hermes.py": "hermes"}
"""The marker of each test module here; the others are ``integrations``."""


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    name = collection_path.name
    if not (name.startswith("test_") and name.endswith(".py")):
        return None
    marker = MARKERS.get(name, "integrations")
    expression = config.option.markexpr
    if not expression:
        return None
    if Expression.compile(expression).evaluate(lambda mark: mark == marker):
        return None
    return True
