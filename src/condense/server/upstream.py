"""Talking to the upstream: the URL, the headers that pass, and one HTTP client.

Every end-to-end header passes unchanged in both directions (authorization, ``x-api-key``,
``anthropic-version``/``-beta``, ``openai-organization``/``-project``, user agents, SDK
headers, request ids, rate-limit headers and any unknown header). Hop-by-hop headers
(``Connection`` and the headers it names, ``Keep-Alive``, ``Transfer-Encoding``, ``TE``,
``Trailer``, ``Upgrade``, ``Proxy-*``) belong to one connection and are dropped, as is
``Host``, which names the proxy. Bodies are relayed raw: a compressed response reaches the
client compressed, with its ``Content-Encoding``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import httpx2

from condense.reduce.thinking import RequestSettings
from condense.server.config import Upstream

__all__ = ["HOP_BY_HOP", "UpstreamClient", "request_headers", "response_headers", "target_url"]

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
    }
)
_CLIENT_DEFAULTS = ("accept", "accept-encoding", "user-agent")


def target_url(upstream: Upstream, path: str, query: bytes | str) -> str:
    """The upstream URL for a request: the upstream base (with its path prefix), the
    request's path, and its query string unchanged."""
    text = query.decode("latin-1") if isinstance(query, bytes) else query
    return upstream.base + path + (f"?{text}" if text else "")


def _named_by_connection(headers: Iterable[tuple[str, str]]) -> set[str]:
    named: set[str] = set()
    for name, value in headers:
        if name.lower() == "connection":
            named.update(part.strip().lower() for part in value.split(",") if part.strip())
    return named


def request_headers(
    headers: Iterable[tuple[str, str]],
    *,
    body_changed: bool,
    settings: RequestSettings | None = None,
) -> list[tuple[str, str]]:
    """The client's headers to send upstream (``Host`` and ``Content-Length`` are set for
    the upstream request; a rewritten body is sent uncompressed), with the headers of
    ``settings`` added (a value joins an existing comma-separated ``anthropic-beta``)."""
    pairs = list(headers)
    drop = HOP_BY_HOP | _named_by_connection(pairs) | {"host", "content-length"}
    if body_changed:
        drop = drop | {"content-encoding"}
    kept = [(name, value) for name, value in pairs if name.lower() not in drop]
    if settings is None or not settings.headers:
        return kept
    named = {name.lower() for name in settings.headers}
    present = {name: value for name, value in kept if name.lower() in named}
    others = [(name, value) for name, value in kept if name.lower() not in named]
    return others + list(settings.apply_headers(present).items())


def response_headers(
    headers: Iterable[tuple[str, str]], extra: Mapping[str, str] = {}
) -> list[tuple[str, str]]:
    """The upstream's headers to return, plus ``extra`` (condense's own)."""
    pairs = list(headers)
    drop = HOP_BY_HOP | _named_by_connection(pairs)
    kept = [(name, value) for name, value in pairs if name.lower() not in drop]
    return kept + list(extra.items())


class UpstreamClient:
    """One pooled async HTTP client for every upstream. ``timeout`` bounds how long an
    upstream may stay silent (connecting, sending, or between two bytes of a reply)."""

    def __init__(self, *, timeout: float) -> None:
        self.client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 30.0)),
            limits=httpx2.Limits(
                max_connections=None, max_keepalive_connections=512, keepalive_expiry=60.0
            ),
            follow_redirects=False,
            trust_env=True,
        )

    async def send(
        self, method: str, url: str, headers: list[tuple[str, str]], body: bytes
    ) -> httpx2.Response:
        """Send one request; the response's body is left to stream (``aiter_raw``)."""
        request = self.client.build_request(method, url, headers=headers, content=body or None)
        sent = {name.lower() for name, _ in headers}
        for name in _CLIENT_DEFAULTS:  # add nothing the client did not send
            if name not in sent and name in request.headers:
                del request.headers[name]
        return await self.client.send(request, stream=True)

    async def aclose(self) -> None:
        await self.client.aclose()
