"""A loaded conversation: canonical messages plus what is needed to write it back.

``Conversation.dump`` returns the native form. Native turns whose canonical messages
reach ``dump`` as the same objects, in the same grouping and order, are emitted verbatim;
only new or changed messages are serialized afresh. So ``load(x).dump() == x`` exactly,
and after compression the unchanged head of a history stays byte-identical (provider
prompt caches keep hitting). ``Conversation.rewritten`` carries that across requests: a
changed history, written in the original's shape, reusing the native turns of an earlier
request of the same conversation as well (what the proxy sends turn after turn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from condense._input import MAX_DEPTH, too_deep
from condense.exceptions import FormatError, UnknownNameError
from condense.formats import anthropic, bedrock, gemini, openai, responses, sharegpt
from condense.formats._common import Group, Parsed
from condense.formats.detect import FORMATS, detect_format
from condense.formats.locate import Locator, Place
from condense.types import RawMessage

Reader = Callable[[object], Parsed]
Writer = Callable[[object, Sequence[Group], Sequence[RawMessage]], Any]

ADAPTERS: dict[str, tuple[Reader, Writer]] = {
    "openai": (openai.read, openai.write),
    "anthropic": (anthropic.read, anthropic.write),
    "responses": (responses.read, responses.write),
    "sharegpt": (sharegpt.read, sharegpt.write),
    "bedrock": (bedrock.read, bedrock.write),
    "gemini": (gemini.read, gemini.write),
}


Layout = Callable[[Sequence[Any]], tuple[Any, tuple[Place | None, ...]]]
LAYOUTS: dict[str, Layout] = {
    "anthropic": anthropic.layout,
    "responses": responses.layout,
    "bedrock": bedrock.layout,
    "gemini": gemini.layout,
}
ROOTS = {
    "anthropic": "messages",
    "responses": "input",
    "sharegpt": "conversations",
    "bedrock": "messages",
    "gemini": "contents",
}


def layout_locator(format: str, messages: Sequence[Any]) -> Locator:
    """Where each of ``messages`` would sit in a request written fresh in ``format``
    (the canonical places for ``openai``); never raises."""
    if format not in LAYOUTS:
        return Locator(check_format(format), ROOTS.get(format, "messages"))
    native, places = LAYOUTS[format](messages)
    return Locator(format, ROOTS[format], places, native)


def check_format(format: str, *, auto: bool = False) -> str:
    """``format`` if it names an adapter (or is ``"auto"`` when allowed)."""
    if (auto and format == "auto") or format in FORMATS:
        return format
    raise UnknownNameError("format", format, ("auto", *FORMATS) if auto else FORMATS)


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """Canonical ``messages`` read from a record in ``format``.

    ``source`` names the file (``None`` for an in-memory object) and ``line`` the 1-based
    line of a JSONL record. A Conversation built by hand (no record) dumps every message
    fresh, as a bare native list (Anthropic: ``{"system"?, "messages"}``).
    """

    messages: list[RawMessage]
    format: str = "openai"
    source: str | None = None
    line: int | None = None
    _record: Any = field(default=None, repr=False, compare=False)
    _groups: tuple[Group, ...] = field(default=(), repr=False, compare=False)
    _places: tuple[Place | None, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        check_format(self.format)

    @classmethod
    def read(
        cls,
        record: object,
        *,
        format: str = "auto",
        source: str | None = None,
        line: int | None = None,
    ) -> Conversation:
        """Read one parsed record; FormatError names ``source``/``line`` on failure."""
        if isinstance(record, dict | list) and too_deep(record, limit=MAX_DEPTH + 2):
            reason = f"is nested deeper than {MAX_DEPTH} levels"  # the record and its list: +2
            raise FormatError(reason, source=source, line=line)
        try:
            name = detect_format(record) if check_format(format, auto=True) == "auto" else format
            parsed = ADAPTERS[name][0](record)
        except FormatError as error:
            raise FormatError(error.reason, source=source, line=line, index=error.index) from error
        return cls(
            messages=parsed.messages,
            format=name,
            source=source,
            line=line,
            _record=record,
            _groups=parsed.groups,
            _places=parsed.places,
        )

    @property
    def record(self) -> Any:
        """The native record as it was read (``None`` for a Conversation built by hand):
        its request settings (``model``, ``thinking`` …) are read from here. Do not
        mutate it."""
        return self._record

    @property
    def locator(self) -> Locator:
        """Where each of ``messages`` came from in the record, for reports that name the
        user's own file (``messages[3].content[1]``, ``input[7]``). A message that was not
        read from the record (one put in by hand, or a copy) has no place; a
        Conversation built by hand knows no places beyond the canonical ones."""
        name = ROOTS.get(self.format, "messages")
        if self.format == "openai" and isinstance(self._record, dict):
            name = openai.list_key(self._record)
        read = [message for group in self._groups for message in group.messages]
        places: tuple[Place | None, ...] = self._places
        if len(read) != len(self.messages) or any(
            a is not b for a, b in zip(read, self.messages, strict=False)
        ):
            found = self._place_of()
            places = tuple(found.get(id(message)) for message in self.messages)
        return Locator(self.format, name, places, self._record)

    def rewritten(
        self, messages: Sequence[RawMessage], *, earlier: Iterable[Conversation] = ()
    ) -> Conversation:
        """This conversation with ``messages`` as its history, to be written in its shape.

        The record (its other fields) and format stay; the native turns it knows are this
        conversation's and ``earlier`` ones' (say, what a previous request of the same
        conversation sent, itself a rewritten Conversation) whose messages ``messages``
        still holds as the same objects: :meth:`dump` writes those turns verbatim and
        only the rest afresh, so a head sent before goes out byte-identical. Turns
        ``messages`` no longer holds are forgotten: keeping the result keeps no more
        native turns than it sends. Nothing is copied or mutated.
        """
        sent = {id(message) for message in messages}
        known = (*(group for other in earlier for group in other._groups), *self._groups)
        groups = tuple(g for g in known if g.messages and id(g.messages[0]) in sent)
        places = self._place_of()
        return replace(
            self,
            messages=list(messages),
            _groups=groups,
            _places=tuple(places.get(id(m)) for group in groups for m in group.messages),
        )

    def _place_of(self) -> dict[int, Place | None]:
        """The place in the record of each message read from it, by identity."""
        read = [message for group in self._groups for message in group.messages]
        if len(read) != len(self._places):
            return {}
        return {id(message): place for message, place in zip(read, self._places, strict=True)}

    def dump(self, messages: Sequence[RawMessage] | None = None) -> Any:
        """The native form of ``messages`` (default: this conversation's own).

        The record's other top-level fields are carried unchanged. Turns whose messages
        are unchanged objects are the original native objects; do not mutate them.
        """
        chosen = self.messages if messages is None else messages
        try:
            return ADAPTERS[self.format][1](self._record, self._groups, chosen)
        except FormatError as error:
            raise FormatError(
                error.reason, source=self.source, line=self.line, index=error.index
            ) from error
