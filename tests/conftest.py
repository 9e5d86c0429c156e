"""Shared fixtures. Keep this generic: helpers of one test module live in that module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from condense.testing import FakeProvider


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    """A fresh OpenAI-compatible server on 127.0.0.1, closed after the test."""
    with FakeProvider() as provider:
        yield provider
