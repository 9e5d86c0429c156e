"""Where the tests find real third-party conversations.

By default, the sample shipped in ``tests/data/corpus`` (see its ``SOURCES.md``), so a
clean clone runs every test. ``CONDENSE_CORPUS=DIR`` points the same tests at a full copy
of the corpus: ``CONDENSE_CORPUS=../shared/corpus pytest -m corpus``.
"""

from __future__ import annotations

import os
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent / "data" / "corpus"
CORPUS = Path(os.environ.get("CONDENSE_CORPUS") or SAMPLE)


def corpus_files(pattern: str = "*/*.jsonl") -> list[Path]:
    """The corpus files matching ``pattern``; never empty (a missing corpus is an error,
    not a reason to skip)."""
    found = sorted(CORPUS.glob(pattern))
    if not found:
        raise FileNotFoundError(f"no {pattern} under {CORPUS} (CONDENSE_CORPUS)")
    return found


BROKEN_AGENT_REQUESTS = frozenset({"codex_localpush_019c8a53"})
"""The one request in ``agents/`` that is a real broken history (a call without its
output, kept as found); every other one was accepted by its provider."""


def agent_requests(*, accepted_only: bool = True) -> list[Path]:
    """The real Claude Code / Codex CLI request bodies in ``agents/`` (see its
    ``SOURCES.md``): by default only those the provider accepted, which are ground truth."""
    found = [
        path
        for path in corpus_files("agents/*.json")
        if path.name != "manifest.json"
        and not (accepted_only and path.stem in BROKEN_AGENT_REQUESTS)
    ]
    if not found:
        raise FileNotFoundError(f"no agent requests under {CORPUS / 'agents'}")
    return found
