"""Shared fixtures and the hypothesis profiles. Keep this generic: helpers of one test
module live in that module.

Two hypothesis profiles (see the README's "Tests" section):

- ``lean``, the default: every property test tries the examples its own
  ``max_examples`` asks for (:func:`profiles.examples` says why not fewer), 100 where it
  names none;
- ``thorough``, by name (``HYPOTHESIS_PROFILE=thorough pytest`` or
  ``pytest --hypothesis-profile=thorough``): five times what each test asks for.

Neither has a deadline or the ``too_slow`` health check: both measure wall-clock time,
which a loaded machine stretches, and a property test must fail only for a wrong answer.
The profile is loaded here, before any test module is imported, because a test's
``@settings(...)`` takes the values it does not name from the profile loaded at that time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from condense.testing import FakeProvider
from profiles import LEAN_EXAMPLES, THOROUGH_EXAMPLES

_UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "print_blob": True}
settings.register_profile("lean", max_examples=LEAN_EXAMPLES, **_UNTIMED)
settings.register_profile("thorough", max_examples=THOROUGH_EXAMPLES, **_UNTIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "lean"))


def pytest_report_header(config: pytest.Config) -> str | None:
    """Name the profile in the header (hypothesis itself does only under ``-v``)."""
    if config.get_verbosity() >= 1:
        return None
    return f"hypothesis profile {settings.get_current_profile_name()!r}"


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    """A fresh OpenAI-compatible server on 127.0.0.1, closed after the test."""
    with FakeProvider() as provider:
        yield provider
