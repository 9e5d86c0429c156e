"""The summarizer registry, the package exports and the deterministic test double."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

import condense.summarizers as summarizers
from condense.exceptions import CondenseRuntimeError, InputError, UnknownNameError
from condense.summarizers import (
    ExtractiveSummarizer,
    OpenAISummarizer,
    Summarizer,
    SummaryOutcome,
    get_summarizer,
    known_summarizers,
    register_summarizer,
    summarize_with_report,
)
from condense.summarizers import registry as registry_module
from condense.summarizers._text import estimate_tokens
from condense.testing import DeterministicSummarizer
from condense.types import RawMessage

SPAN: list[RawMessage] = [
    {"role": "user", "content": "Rename the config key `timeout_s` to `timeout`."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "grep", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "edit", "arguments": "{}"}},
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": "config.py:3"},
    {"role": "tool", "tool_call_id": "b", "content": "ok"},
]


class Upper:
    """A user summarizer: the last message in capitals."""

    name = "upper"

    def __init__(self, *, limit: int = 20) -> None:
        self.limit = limit

    def summarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        return str(messages[-1].get("content", "")).upper()[: self.limit]


@pytest.fixture(autouse=True)
def _restore_registry() -> Iterator[None]:
    saved = dict(registry_module._registry)
    yield
    registry_module._registry.clear()
    registry_module._registry.update(saved)


def test_exports_are_sorted_and_resolve() -> None:
    assert summarizers.__all__ == sorted(summarizers.__all__)
    for name in summarizers.__all__:
        assert getattr(summarizers, name) is not None
    assert set(summarizers.__all__) <= set(dir(summarizers))
    with pytest.raises(AttributeError):
        summarizers.NoSuchThing  # noqa: B018


def test_importing_the_package_does_not_import_the_sdk() -> None:
    code = (
        "import sys, condense.summarizers; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'httpx2')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_default_is_extractive() -> None:
    assert isinstance(get_summarizer(None), ExtractiveSummarizer)
    assert isinstance(get_summarizer("extractive"), ExtractiveSummarizer)
    assert isinstance(get_summarizer(" Extractive "), ExtractiveSummarizer)


def test_builtin_names() -> None:
    assert known_summarizers() == ("extractive", "openai")  # no test double among them
    openai_summarizer = get_summarizer("openai", base_url="http://127.0.0.1:9/v1", model="m")
    assert isinstance(openai_summarizer, OpenAISummarizer)


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as caught:
        get_summarizer("abstractive")
    message = str(caught.value)
    assert "unknown summarizer 'abstractive'" in message
    for name in ("extractive", "openai"):
        assert name in message
    assert isinstance(caught.value, InputError)


def test_unknown_option_is_an_input_error() -> None:
    with pytest.raises(InputError, match="'extractive' does not take these options"):
        get_summarizer("extractive", model="gpt")


def test_an_object_passes_through() -> None:
    upper = Upper()
    assert get_summarizer(upper) is upper
    with pytest.raises(InputError, match="apply only when a summarizer is given by name"):
        get_summarizer(upper, limit=3)
    with pytest.raises(InputError, match="got int"):
        get_summarizer(42)  # type: ignore[arg-type]


def test_register_a_callable_and_a_lazy_path() -> None:
    register_summarizer("upper", Upper)
    summarizer = get_summarizer("upper", limit=6)
    assert summarizer.summarize(SPAN, previous=None, target_tokens=10) == "OK"
    register_summarizer("lazy", "test_summarizers_registry:Upper")
    assert get_summarizer("lazy").name == "upper"
    assert "upper" in known_summarizers()


def test_register_refuses_to_overwrite_unless_asked() -> None:
    with pytest.raises(InputError, match="already registered"):
        register_summarizer("extractive", Upper)
    register_summarizer("extractive", Upper, replace=True)
    assert isinstance(get_summarizer(None), Upper)


@pytest.mark.parametrize("factory", ["no-colon", 3])
def test_register_checks_the_factory(factory: Any) -> None:
    with pytest.raises(InputError, match="factory must be"):
        register_summarizer("bad", factory)


def test_register_checks_the_name() -> None:
    with pytest.raises(InputError, match="non-empty"):
        register_summarizer("  ", Upper)


def test_a_broken_lazy_path_is_reported() -> None:
    register_summarizer("broken", "condense.no_such_module:Thing")
    with pytest.raises(InputError, match="cannot import"):
        get_summarizer("broken")


def test_a_factory_must_return_a_summarizer() -> None:
    register_summarizer("not-one", lambda: object())  # type: ignore[arg-type, return-value]
    with pytest.raises(InputError, match="returned object"):
        get_summarizer("not-one")


def test_builtins_satisfy_the_protocol() -> None:
    for summarizer in (ExtractiveSummarizer(), DeterministicSummarizer(), Upper()):
        assert isinstance(summarizer, Summarizer)


def test_report_helper_wraps_plain_summarizers() -> None:
    outcome = summarize_with_report(Upper(), SPAN, previous=None, target_tokens=10)
    assert outcome == SummaryOutcome(text="OK", summarizer="upper")


# -- DeterministicSummarizer -------------------------------------------------------------------


def test_deterministic_output_depends_only_on_inputs() -> None:
    text = DeterministicSummarizer().summarize(SPAN, previous="earlier", target_tokens=100)
    assert text == (
        "summary of 4 messages; first user ask: Rename the config key `timeout_s` to "
        "`timeout`.; tools: grep, edit; previous: earlier"
    )
    again = DeterministicSummarizer().summarize(list(SPAN), previous="earlier", target_tokens=100)
    assert again == text


def test_deterministic_fits_the_target() -> None:
    text = DeterministicSummarizer().summarize(SPAN, previous=None, target_tokens=5)
    assert estimate_tokens(text) <= 5


def test_deterministic_oversize() -> None:
    text = DeterministicSummarizer(oversize=True).summarize(SPAN, previous=None, target_tokens=5)
    assert estimate_tokens(text) >= 15


def test_deterministic_failures() -> None:
    with pytest.raises(CondenseRuntimeError, match="configured to fail"):
        DeterministicSummarizer(fail=True).summarize(SPAN, previous=None, target_tokens=5)
    with pytest.raises(TimeoutError, match="slow"):
        DeterministicSummarizer(fail=TimeoutError("slow")).summarize(
            SPAN, previous=None, target_tokens=5
        )
    flaky = DeterministicSummarizer(fail_times=2)
    for _ in range(2):
        with pytest.raises(CondenseRuntimeError):
            flaky.summarize(SPAN, previous=None, target_tokens=50)
    assert flaky.summarize(SPAN, previous=None, target_tokens=50).startswith("summary of 4")
    assert [call.message_count for call in flaky.calls] == [4, 4, 4]
    with pytest.raises(InputError):
        DeterministicSummarizer(fail_times=-1)


def test_deterministic_tolerates_odd_messages() -> None:
    odd: list[Any] = [
        None,
        3,
        {"role": "user", "content": [{"type": "image_url"}]},
        {"tool_calls": 5},
    ]
    assert DeterministicSummarizer().summarize(odd, previous=None, target_tokens=50) == (
        "summary of 4 messages; first user ask: [image]"
    )
