"""``condense proxy``: condense in front of any agent, with one base-URL setting.

The proxy speaks OpenAI Chat Completions, OpenAI Responses and Anthropic Messages on
loopback. For each request it validates the history against the upstream's provider
rules, repairs what the provider would refuse, compresses what is over the model's
window, and forwards it — byte-identical when nothing had to change. Streams are relayed
event by event; a refusal that arrives before the first response byte is repaired or
compressed and retried once. The modules, in the order a request meets them:

- ``apis`` — which path speaks which API, and each API's error shape;
- ``config`` — upstreams (routing by path and model), margins, memory bounds;
- ``routing`` — ``choose_provider``: the one place the provider is chosen;
- ``windows`` — context windows (configured, learned from overflow errors, built in) and
  the provider's own count, learned from its answers;
- ``budget`` — the room of one request in condense's tokens, as the provider counts it;
- ``codec`` — compressed request bodies (gzip, zstd, …);
- ``prepare`` — read, repair, compress, decide the bytes to send;
- ``memory`` — per-conversation state, so the compressed head stays identical;
- ``upstream`` — headers that pass, the URL, one pooled HTTP client;
- ``retry`` — one repaired or compressed retry after a fixable refusal;
- ``usage`` — the provider's count of each request, read from its answer as it passes;
- ``journal`` and ``page`` — the per-request JSON log and the live page;
- ``app`` — the Starlette app that ties them together.

The errors only the proxy raises — :class:`BadRequest` (a body that is not a request of
its API), :class:`BodyDecodingError` (a body its ``Content-Encoding`` cannot decode) and
:class:`UpstreamRefusal` (an upstream's error answer) — are importable from here; like
every condense error they belong to the one tree of ``condense.exceptions``.

Needs the ``proxy`` extra (Starlette, uvicorn, httpx2): ``pip install 'condense[proxy]'``.
Importing this package imports none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from condense.exceptions import BadRequest, BodyDecodingError, UpstreamRefusal

if TYPE_CHECKING:
    from condense.server.app import create_app as create_app

__all__ = ["BadRequest", "BodyDecodingError", "UpstreamRefusal", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from condense.server.app import create_app

        return create_app
    raise AttributeError(name)
