"""The ground floor (``condense.message``): one rule for a content's text, one for call
ids, one for replay state — and the layers that ask read the same answer (issue 20)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from condense.compress import compress
from condense.datasets.trajectory import message_text
from condense.formats import load
from condense.message import content_text, extends, is_text_part, resumed, text_parts
from condense.reduce.base import has_images, other_parts
from condense.reduce.cut import cut_content
from condense.reduce.summary import find_summary, stands_for, summary_block
from condense.repair.worth import Worth, result_worth
from condense.server.prepare import keeps_ask
from condense.summarizers._text import content_text as summarized_text
from condense.testing.sessions import synthetic_session
from condense.validate import validate

# Every kind of part a canonical content meets, with what the model reads as text.
CONTENT: list[Any] = [
    {"type": "text", "text": "chat"},
    {"type": "input_text", "text": "responses in"},
    {"type": "output_text", "text": "responses out"},
    {"text": "untyped, as Gemini writes a part"},
    "a bare string",
    {"type": "text", "text": None},  # no text: not the word "None"
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
    {"type": "refusal", "refusal": "I can't"},
    {"type": "document", "source": {"type": "text", "data": "x"}, "text": "not a text part"},
]
TEXT = [
    "chat",
    "responses in",
    "responses out",
    "untyped, as Gemini writes a part",
    "a bare string",
]


def test_the_text_of_a_content_is_its_text_parts_in_order() -> None:
    assert text_parts(CONTENT) == TEXT
    assert content_text(CONTENT) == "\n".join(TEXT)
    assert text_parts("plain") == ["plain"] and text_parts("") == [""]
    assert text_parts(None) == [] and text_parts({"text": "a dict is not a content"}) == []
    assert [is_text_part(part) for part in CONTENT] == [True] * 5 + [False] * 4


def test_every_layer_reads_the_same_text() -> None:
    message = {"role": "user", "content": CONTENT}
    assert message_text(message) == content_text(CONTENT)  # what a dataset counts
    # the proxy's "is the ask still there": every text, verbatim, in a user message
    assert keeps_ask(message, [{"role": "user", "content": "\n".join(TEXT)}])
    assert not keeps_ask(message, [{"role": "user", "content": "chat"}])
    sharegpt = {
        "conversations": [
            {"from": "human", "value": "go"},
            {"from": "gpt", "value": "ok"},
        ]
    }
    conversation = load(sharegpt, format="sharegpt")
    changed = [*conversation.messages[:1], {"role": "assistant", "content": CONTENT}]
    written = conversation.dump(changed)
    assert written["conversations"][1]["value"] == content_text(CONTENT)


def test_a_summary_reads_the_same_text() -> None:
    read = summarized_text(CONTENT, 10_000)  # the summarizers' reading: text, then words
    assert read == "\n".join([*TEXT, "[image]", "I can't"])  # for the parts that are not


def test_a_results_worth_reads_the_same_text() -> None:
    def worth(content: object) -> Worth:
        return result_worth({"role": "tool", "tool_call_id": "c", "content": content})

    assert worth([{"type": "text", "text": None}]) is Worth.EMPTY
    assert worth([{"text": "Error: no such file"}]) is Worth.ERROR  # untyped text is text
    assert worth(["Failed: exit code 1"]) is Worth.ERROR
    # Python's own header: the ``\b`` after its ``)`` never matched before ``:``
    assert worth("Traceback (most recent call last):\n  File x") is Worth.ERROR
    assert worth([{"type": "image_url", "image_url": {"url": "x"}}]) is Worth.OUTPUT
    assert worth([{"type": "text", "text": "[Tool execution was interrupted]"}]) is (
        Worth.PLACEHOLDER
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["type", "text", "x"]), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(content=json_values)
def test_any_content_has_a_text_and_reading_it_never_fails(content: Any) -> None:
    texts = text_parts(content)
    assert all(isinstance(text, str) for text in texts)
    assert content_text(content) == (content if isinstance(content, str) else "\n".join(texts))


# -- prefix reuse: one rule for the library, guard and the proxy --------------------------


def test_a_history_extends_a_prefix_by_identity_or_by_value() -> None:
    prefix = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    copy = json.loads(json.dumps(prefix))
    new = {"role": "user", "content": "c"}
    assert extends([*prefix, new], prefix) and extends([*copy, new], prefix)
    assert not extends(prefix[:1], prefix)
    assert not extends([prefix[0], {"role": "assistant", "content": "B"}], prefix)
    sent = [{"role": "user", "content": "[summary] a b"}]
    assert resumed([*copy, new], prefix, sent) == [*sent, new]
    assert resumed([new], prefix, sent) is None


def test_compress_resumes_a_session_whose_client_resends_it_as_json() -> None:
    """An agent that keeps its history as JSON (or a client behind a proxy) sends equal
    messages, not the same objects: the session still resumes, as the proxy's memory and
    ``guard`` already did."""
    session = synthetic_session(200, seed=9)
    first = compress(session, budget=8_000)
    assert first.report.tokens_after < first.report.tokens_before  # it did compress
    again = [*json.loads(json.dumps(session)), {"role": "user", "content": "and now deploy"}]
    second = compress(again, budget=8_000, previous=first.state)
    assert second.report.incremental
    assert second.messages[-1] is again[-1]
    assert validate(second.messages) == [] and second.report.fits


def test_reduce_reads_the_same_text() -> None:
    # a cut reads the text parts by the same rule: an untyped one is cut, a malformed one
    # (a type that is not a string) is left alone, without an error
    cut = cut_content(
        [{"text": "x" * 5000}, {"type": ["text"], "text": "y"}], 200, "read", images=False
    )
    assert isinstance(cut, list) and len(cut[0]["text"]) < 1000
    assert cut[1] == {"type": ["text"], "text": "y"}
    assert other_parts(CONTENT) == {"text": 1, "image_url": 1, "refusal": 1, "document": 1}
    assert not has_images([{"type": ["image_url"]}])  # a malformed part: no error
    block = summary_block("what happened", covered=3)
    # a summary that went out through the Responses API comes back as ``input_text``
    responses = {"role": "user", "content": [{"type": "input_text", "text": block}]}
    assert find_summary(responses) == ("what happened", "")
    assert stands_for(responses) == 3
