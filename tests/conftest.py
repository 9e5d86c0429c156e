"""Shared fixtures, and the hypothesis profiles (:mod:`profiles`). Keep this generic:
helpers of one test module live in that module."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from condense.testing import FakeProvider

# No test reaches the network. LiteLLM fetches its model cost map on import unless told
# not to, and any test may import it (tests/test_exceptions.py imports every module of
# condense, its LiteLLM adapter among them): its warning, seconds later, then lands in
# whatever test is capturing stderr.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# hermes-agent's own environment (see the README) has pytest and no test extra
HYPOTHESIS = importlib.util.find_spec("hypothesis") is not None
if HYPOTHESIS:
    import profiles

    profiles.load(os.environ.get("HYPOTHESIS_PROFILE", "lean"))


def pytest_report_header(config: pytest.Config) -> str | None:
    """Name the profile in the header (hypothesis itself does only under ``-v``)."""
    if not HYPOTHESIS or config.get_verbosity() >= 1:
        return None
    return f"hypothesis profile {profiles.loaded()!r}"


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    """A fresh OpenAI-compatible server on 127.0.0.1, closed after the test."""
    with FakeProvider() as provider:
        yield provider
