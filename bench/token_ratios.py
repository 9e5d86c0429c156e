"""Measure how condense's token count relates to the provider's, from real transcripts.

    python bench/token_ratios.py                       # the transcripts in tests/data
    CONDENSE_CORPUS=../shared/corpus python bench/token_ratios.py

Claude Code transcripts record every response's ``usage`` (``input_tokens``,
``cache_read_input_tokens``, ``cache_creation_input_tokens``: together, the provider's
count of the request) next to the messages that made up the request. The request is
rebuilt by condense's transcript reader (``condense.formats.claude_code``) from the
events before the response, and its messages counted with condense (``o200k_base``,
Anthropic media billing). The system prompt and the tool definitions are not recorded
(the reader's tools are placeholders), so single requests cannot be compared; the
*growth* between consecutive requests can — it is all messages, and the unrecorded part
cancels out. Per session segment the script prints the provider's growth over condense's,
summed over every step of at least ``--min-step`` tokens (2,000: a tool output, code or
text), and the spread of single steps. Claude Code also adds reminders to user messages
that transcripts do not record: small steps are dominated by them, so they are left out.

The ratios printed are the evidence for ``condense.tokens.families`` (``claude``).
"""

from __future__ import annotations

import argparse
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from condense.formats import Conversation, claude_code
from condense.formats.transcripts import numbered, parse_events
from condense.tokens import count_tokens

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent / "tests" / "data" / "corpus"
_USAGE = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass(frozen=True)
class Segment:
    """One stretch of a session between compactions: per step, (theirs, ours) growth."""

    model: str
    steps: list[tuple[int, int]]

    def ratio(self, min_step: int) -> float | None:
        big = [(t, o) for t, o in self.steps if o >= min_step]
        if not big:
            return None
        return sum(t for t, _ in big) / sum(o for _, o in big)

    def spread(self, min_step: int) -> list[float]:
        return sorted(t / o for t, o in self.steps if o >= min_step)


def requests(path: Path) -> list[tuple[int, dict[str, Any], str] | None]:
    """``(provider's count, the request body, model)`` per response, in order; ``None``
    where a compaction starts a new context. The request is the one the transcript
    reader rebuilds (``condense.formats.claude_code``) from the events before the
    response's first event."""
    events, _ = parse_events(numbered(path.read_text(encoding="utf-8").splitlines()))
    out: list[tuple[int, dict[str, Any], str] | None] = []
    seen: set[str] = set()
    contexts = 0
    for position, event in enumerate(events):
        message = event.data.get("message") or {}
        response = message.get("id") if event.data.get("type") == "assistant" else None
        if not isinstance(response, str) or response in seen:
            continue
        seen.add(response)
        built = claude_code.requests(events[:position])
        if not built:
            continue
        if len(built) != contexts:
            contexts = len(built)
            out.append(None)
        usage = message.get("usage") or {}
        theirs = sum(int(usage.get(key) or 0) for key in _USAGE)
        out.append((theirs, built[-1].body, str(message.get("model"))))
    return out


def segments(path: Path) -> list[Segment]:
    """The session's stretches between compactions, with condense's count of each request."""
    found: list[Segment] = []
    previous: tuple[int, int] | None = None
    current: Segment | None = None
    for item in requests(path):
        if item is None:
            previous, current = None, None
            continue
        theirs, body, model = item
        messages = Conversation.read(body, format="anthropic").messages
        ours = count_tokens(messages, media="anthropic")
        if current is None:
            current = Segment(model=model, steps=[])
            found.append(current)
        if previous is not None and theirs > previous[0]:
            current.steps.append((theirs - previous[0], ours - previous[1]))
        previous = (theirs, ours)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-step", type=int, default=2000)
    args = parser.parse_args()
    corpus = Path(os.environ.get("CONDENSE_CORPUS") or DEFAULT_CORPUS)
    paths = sorted((corpus / "agents" / "raw").glob("claude-code-*.jsonl"))
    print(f"provider's tokens per condense token (o200k_base), steps ≥ {args.min_step:,}")
    for path in paths:
        for segment in segments(path):
            ratio = segment.ratio(args.min_step)
            if ratio is None:
                continue
            spread = segment.spread(args.min_step)
            print(
                f"  {path.name[:48]:48s} {segment.model:28s} {ratio:5.3f} over {len(spread):3d} "
                f"steps (single steps {spread[0]:.2f}–{spread[-1]:.2f}, "
                f"median {statistics.median(spread):.2f})"
            )


if __name__ == "__main__":
    main()
