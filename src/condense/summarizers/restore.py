"""Check a model's summary against the span: put back the identifiers it lost.

An LLM summary reads well and drops exactly what the next turn needs most (file paths,
error codes, ids; Factory's probe evaluation of compaction, 2025). After the model
answers, the span's key facts are ranked the extractive way
(:func:`condense.summarizers.salient.salient`); each one carrying an identifier that the
summary does not contain is appended verbatim under ``## Key facts``, best first, while
the summary stays within its target. The previous summary's facts count too: an update
must not lose them either.
"""

from __future__ import annotations

from collections.abc import Sequence

from condense.summarizers import digest as dg
from condense.summarizers._text import estimate_tokens
from condense.summarizers.salient import salient
from condense.summarizers.worth import identifiers, info_score
from condense.tokens import count_text

# How many of the span's key facts are considered.
_CANDIDATES = 200


def restore_identifiers(
    text: str, messages: Sequence[object], *, previous: str | None, target_tokens: int
) -> str:
    """``text`` plus the span's key facts whose identifiers it lost, within ``target_tokens``.

    ``text`` itself is never changed (only appended to); when it already fills the
    target, it comes back as is. Deterministic for a given ``text`` and span.
    """
    lost = _lost_facts(text, messages, previous)
    if not lost:
        return text
    out = text.rstrip()
    header = f"\n## {dg.KEY}"
    added: list[str] = []
    for fact in lost:
        line = f"\n- {fact}"
        body = out + (header if not added else "") + "".join(added) + line
        if estimate_tokens(body) > target_tokens:
            continue
        added.append(line)
    while added and count_text(out + header + "".join(added)) > target_tokens:
        added.pop()
    return out + header + "".join(added) if added else text


def _lost_facts(text: str, messages: Sequence[object], previous: str | None) -> list[str]:
    """The best-ranked facts of the span (and of ``previous``) with an identifier missing."""
    facts = [c.text for c in salient(messages, limit=_CANDIDATES)]
    if previous:
        old = dg.parse(previous)
        for section in (dg.KEY, dg.ERRORS, dg.DECISIONS):
            facts.extend(old.sections[section])
    ranked = sorted(dict.fromkeys(facts), key=lambda fact: -info_score(fact))
    lost = []
    for fact in ranked:
        tokens = [token for token in identifiers(fact) if len(token) >= 4]
        if tokens and any(token not in text for token in tokens):
            lost.append(fact)
    return lost
