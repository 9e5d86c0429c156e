"""Measure how condense's token count relates to the provider's, from real transcripts.

    python bench/token_ratios.py                       # the transcripts in tests/data
    CONDENSE_CORPUS=../shared/corpus python bench/token_ratios.py

Claude Code transcripts record every response's ``usage`` (``input_tokens``,
``cache_read_input_tokens``, ``cache_creation_input_tokens``: together, the provider's
count of the request) next to the messages that made up the request. The request is
rebuilt (every user and assistant record before the response, assistant records of one
response joined, consecutive user records joined; a ``compact_boundary`` starts over)
and counted with condense (``o200k_base``, Anthropic media billing). The system prompt
and the tool definitions are not recorded, so single requests cannot be compared; the
*growth* between consecutive requests can — it is all messages, and the unrecorded part
cancels out. Per session segment the script prints the provider's growth over condense's,
summed over every step of at least ``--min-step`` tokens (2,000: a tool output, code or
text), and the spread of single steps. Claude Code also adds reminders to user messages
that transcripts do not record: small steps are dominated by them, so they are left out.

The ratios printed are the evidence for ``condense.tokens.families`` (``claude``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from condense.formats import Conversation
from condense.tokens import count_tokens

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent / "tests" / "data" / "corpus"


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


def requests(path: Path) -> list[tuple[int, list[dict[str, Any]], str] | None]:
    """``(provider's count, the request's messages, model)`` per response, in order;
    ``None`` where a compaction starts the history over."""
    out: list[tuple[int, list[dict[str, Any]], str] | None] = []
    messages: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        kind = record.get("type")
        if kind == "system" and record.get("subtype") == "compact_boundary":
            messages = []
            out.append(None)
            continue
        if kind not in ("user", "assistant"):
            continue
        message = record.get("message") or {}
        if kind == "assistant":
            response = message.get("id")
            if response not in seen:
                seen.add(response)
                usage = message.get("usage") or {}
                theirs = sum(
                    usage.get(key, 0)
                    for key in (
                        "input_tokens",
                        "cache_read_input_tokens",
                        "cache_creation_input_tokens",
                    )
                )
                snapshot = [{"role": m["role"], "content": list(m["content"])} for m in messages]
                out.append((theirs, snapshot, str(message.get("model"))))
            blocks = [
                block
                for block in message.get("content") or []
                if not (block.get("type") == "text" and not str(block.get("text", "")).strip())
            ]
            if messages and messages[-1]["role"] == "assistant" and messages[-1]["id"] == response:
                messages[-1]["content"] += blocks
            else:
                messages.append({"role": "assistant", "content": blocks, "id": response})
        else:
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if messages and messages[-1]["role"] == "user":
                messages[-1]["content"] += list(blocks)
            else:
                messages.append({"role": "user", "content": list(blocks)})
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
        theirs, messages, model = item
        if not messages:
            continue
        native = {"messages": messages}
        ours = count_tokens(
            Conversation.read(native, format="anthropic").messages, media="anthropic"
        )
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
