"""The SDK calls ``guard`` heals: where each keeps its history and its output budget, and
how a healed history goes back into the call's arguments.

- ``chat`` (``chat.completions``): ``messages`` is condense's canonical form itself;
- ``responses`` (``responses``): the ``input`` items (a string is one user message), read
  and written by :mod:`condense.formats`; ``instructions`` stays a request field;
- ``anthropic`` (``messages``, ``beta.messages``): the ``messages`` turns and ``system``,
  read and written by :mod:`condense.formats`; Anthropic's own ``drop_block`` setting can
  ride on the call.

A :class:`Request` holds one call's arguments with its history read as canonical messages;
``Request.kwargs`` writes a (healed) canonical history back. Turns that come back unchanged
are the caller's own native objects, so an untouched request is sent as it was given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.errors.replay import BINDING_BETA
from condense.exceptions import CondenseError
from condense.formats import Conversation


@dataclass(frozen=True)
class Endpoint:
    """One wire API: ``history`` is the argument holding its history, ``output`` the
    arguments that cap the answer (the first one the call used is the one lowered),
    ``profile`` the provider profile it speaks when ``guard``'s provider is ``"auto"``,
    ``native`` its :mod:`condense.formats` format (``None``: canonical as is), and
    ``settings`` whether Anthropic's ``drop_block`` can ride on the call."""

    name: str
    history: str
    output: tuple[str, ...]
    profile: str | None = None
    native: str | None = None
    settings: bool = False


CHAT = Endpoint("chat", "messages", ("max_completion_tokens", "max_tokens"))
RESPONSES = Endpoint("responses", "input", ("max_output_tokens",), "responses", "responses")
ANTHROPIC = Endpoint("anthropic", "messages", ("max_tokens",), "anthropic", "anthropic", True)

ENDPOINTS: Mapping[tuple[str, ...], Endpoint] = {
    ("chat", "completions"): CHAT,
    ("responses",): RESPONSES,
    ("messages",): ANTHROPIC,
    ("beta", "messages"): ANTHROPIC,
}
"""The SDK resources guarded, by their attribute path on the client."""

GUARDED_METHODS = frozenset({"create", "parse", "stream"})
"""The methods of a guarded resource that send a history (``stream`` opens a stream)."""


@dataclass(frozen=True)
class Request:
    """One guarded call: its ``params`` (all but the history), the ``native`` history as
    it will be sent unless healed, and that history as canonical ``messages``."""

    endpoint: Endpoint
    params: dict[str, Any]
    native: Any
    messages: list[Any]
    conversation: Conversation | None = None

    @classmethod
    def read(cls, endpoint: Endpoint, params: Mapping[str, Any], native: Any) -> Request | None:
        """The request, or ``None`` when its history cannot be read (it is then sent as
        given: a guard never breaks a call it cannot help)."""
        rest = {key: value for key, value in params.items() if key != endpoint.history}
        if endpoint.native is None:
            if isinstance(native, str | bytes | Mapping) or not isinstance(native, Sequence):
                return None
            return cls(endpoint, rest, list(native), list(native))
        record: dict[str, Any] = {endpoint.history: plain_json(native)}
        if endpoint is ANTHROPIC and "system" in rest:
            record["system"] = plain_json(rest.pop("system"))
        try:
            conversation = Conversation.read(record, format=endpoint.native)
        except CondenseError:
            return None
        return cls(endpoint, rest, native, list(conversation.messages), conversation)

    @property
    def model(self) -> str | None:
        model = self.params.get("model")
        return model if isinstance(model, str) else None

    @property
    def thinking(self) -> Mapping[str, Any] | None:
        thinking = self.params.get("thinking") if self.endpoint.settings else None
        return thinking if isinstance(thinking, Mapping) else None

    def output_key(self) -> str:
        """The argument that caps the answer: the one the call used, else the first."""
        return next((k for k in self.endpoint.output if k in self.params), self.endpoint.output[0])

    def max_tokens(self) -> int | None:
        value = self.params.get(self.output_key())
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def history(self, messages: Sequence[Any]) -> dict[str, Any]:
        """The arguments that carry ``messages`` in this API's own shape."""
        if self.conversation is None:
            return {self.endpoint.history: list(messages)}
        dumped = self.conversation.dump(list(messages))
        fields = {self.endpoint.history: dumped[self.endpoint.history]}
        if isinstance(dumped, dict) and "system" in dumped:
            fields["system"] = dumped["system"]
        return fields

    def kwargs(
        self,
        messages: Sequence[Any],
        *,
        max_tokens: int | None = None,
        prefix_mismatch_behavior: str | None = None,
    ) -> dict[str, Any]:
        """The SDK call's arguments with ``messages`` as the history, ``max_tokens`` as
        the output cap (``None``: the caller's) and Anthropic's prefix-mismatch setting."""
        out = {**self.params, **self.history(messages)}
        if max_tokens is not None:
            out[self.output_key()] = max_tokens
        if prefix_mismatch_behavior is not None:
            out = with_binding(out, prefix_mismatch_behavior)
        return out


def with_binding(params: Mapping[str, Any], behavior: str) -> dict[str, Any]:
    """``params`` with ``thinking.block_binding.prefix_mismatch_behavior`` set and its beta
    turned on: in ``betas`` for the beta Messages methods, else in the ``anthropic-beta``
    header. A request without ``thinking`` gets ``adaptive``, which is what models with
    preserved thinking do when it is left out (Anthropic docs, "Fix a thinking block bound
    to a different conversation")."""
    thinking = dict(params.get("thinking") or {"type": "adaptive"})
    thinking["block_binding"] = {"prefix_mismatch_behavior": behavior}
    out = {**params, "thinking": thinking}
    betas = params.get("betas")
    if isinstance(betas, list | tuple):
        out["betas"] = list(betas) if BINDING_BETA in betas else [*betas, BINDING_BETA]
        return out
    headers = dict(params.get("extra_headers") or {})
    present = str(headers.get("anthropic-beta") or "")
    values = [value.strip() for value in present.split(",") if value.strip()]
    if BINDING_BETA not in values:
        values.append(BINDING_BETA)
    headers["anthropic-beta"] = ",".join(values)
    out["extra_headers"] = headers
    return out


def plain_json(value: Any) -> Any:
    """``value`` with SDK objects (pydantic models an agent appended from a response, such
    as Anthropic's ``ThinkingBlock``) dumped the way the SDK sends them; everything else is
    returned as the same objects."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, dict):
        return dump(exclude_unset=True, mode="json", by_alias=True)
    if isinstance(value, list | tuple):
        items = [plain_json(item) for item in value]
        same = all(a is b for a, b in zip(items, value, strict=True))
        return value if same and isinstance(value, list) else items
    if isinstance(value, dict):
        fields = {key: plain_json(item) for key, item in value.items()}
        return value if all(fields[key] is value[key] for key in value) else fields
    return value
