"""The proxy as an ASGI app: Starlette routes over one :class:`Proxy`.

Routes: ``GET /healthz`` (200 as soon as the proxy is up, whatever the upstream does);
the live page ``/condense/`` and its feed ``/condense/api/requests``; and every other
path, any method, to the upstream. ``POST`` to a Chat Completions, Messages,
``count_tokens`` or Responses path has its history looked after (``prepare``); all else
is passed through untouched. A WebSocket upgrade (Codex on ``/v1/responses``) is refused
with 426 so the client falls back to HTTP/SSE.

Per request: read the body → prepare (in a worker thread) → send upstream → on a refusal
that can be fixed, before any response byte reached the client, retry once (``retry``) →
relay status, headers and body bytes exactly as they come, event by event, adding
``x-condense-*`` headers when the request was changed → one journal record.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from condense.server.apis import Api, api_for_path, error_bytes
from condense.server.config import ProxySettings, Upstream
from condense.server.journal import Journal, Record
from condense.server.memory import ConversationMemory
from condense.server.page import page_html
from condense.server.prepare import BadRequest, Prepared, Preparer
from condense.server.retry import Retry, plan_retry
from condense.server.upstream import UpstreamClient, request_headers, response_headers, target_url
from condense.server.usage import UsageTap
from condense.server.windows import LearnedWindows

__all__ = ["Proxy", "create_app"]

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
_NOT_RETRIED = frozenset({429, 529})
_INLINE_BODY = 32 * 1024


class Proxy:
    """The proxy's state: settings, memory, learned windows, journal and HTTP client."""

    def __init__(self, settings: ProxySettings, *, log_stream: TextIO | None = None) -> None:
        self.settings = settings
        self.memory = ConversationMemory(maxsize=settings.memory, maxbytes=settings.memory_bytes)
        self.learned = LearnedWindows()
        self.preparer = Preparer(settings, self.memory, self.learned)
        self.journal = Journal(recent=settings.recent, log=settings.log_path, stream=log_stream)
        self._client: UpstreamClient | None = None

    @property
    def client(self) -> UpstreamClient:
        if self._client is None:
            self._client = UpstreamClient(timeout=self.settings.timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self.journal.close()

    # -- routes ------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def page(self, request: Request) -> Response:
        return Response(page_html(), media_type="text/html; charset=utf-8")

    async def feed(self, request: Request) -> Response:
        return JSONResponse(
            {
                "requests": self.journal.recent(),
                "upstreams": list(dict.fromkeys(u.base for u in self.settings.upstreams)),
                "conversations": len(self.memory),
            },
            headers={"cache-control": "no-store"},
        )

    async def forward(self, request: Request) -> Response:
        """Everything else: look after the history where there is one, then relay."""
        started = time.perf_counter()
        path = _raw_path(request)
        api = api_for_path(path) if request.method == "POST" else None
        if request.headers.get("upgrade", "").lower() == "websocket":
            return _websocket_refused(api)
        raw = await request.body()
        prepared: Prepared | None = None
        notes: tuple[str, ...] = ()
        if api is not None:
            work = functools.partial(
                self.preparer.prepare,
                api,
                path,
                raw,
                coding=request.headers.get("content-encoding"),
                beta=request.headers.get("anthropic-beta"),
            )
            try:  # small bodies are quicker here than a thread hop; big ones leave the loop free
                if len(raw) < _INLINE_BODY:
                    prepared = work()
                else:
                    prepared = await anyio.to_thread.run_sync(work)
            except BadRequest as bad:
                self._log_refused(request, path, api, bad, started)
                return _error(api, bad.status, bad.message)
            except Exception as error:  # a condense bug must not cost the user the request
                notes = (f"condense failed, request passed through: {type(error).__name__}",)
        upstream = prepared.upstream if prepared else self.settings.route(path, None)
        body = prepared.body if prepared else raw
        url = target_url(upstream, path, request.scope.get("query_string", b""))
        headers = request_headers(
            request.headers.items(),
            body_changed=bool(prepared and prepared.changed),
            settings=prepared.settings if prepared else None,
        )
        outcome = _Outcome(request, path, api, upstream, prepared, started, notes)
        try:
            reply = await self.client.send(request.method, url, headers, body)
        except httpx2.HTTPError as error:
            return self._unreachable(outcome, error)
        if (
            prepared is not None
            and 400 <= reply.status_code < 500
            and reply.status_code not in (_NOT_RETRIED)
        ):
            error_raw = await _read_raw(reply)
            try:
                retry = await anyio.to_thread.run_sync(
                    functools.partial(
                        plan_retry,
                        prepared,
                        reply.status_code,
                        error_raw,
                        reply.headers,
                        learned=self.learned,
                    )
                )
            except Exception as error:  # a condense bug: the client gets the refusal as it came
                outcome.notes += (f"condense failed planning a retry: {type(error).__name__}",)
                retry = None
            if retry is None:
                return self._whole(outcome, reply, error_raw)
            outcome.retry = retry
            if retry.compressed and retry.target is not None:
                self.preparer.remember(
                    prepared, retry.messages, retry.state, retry.target, retry.settings
                )
            headers = request_headers(
                request.headers.items(), body_changed=True, settings=retry.settings
            )
            try:
                reply = await self.client.send(request.method, url, headers, retry.body)
            except httpx2.HTTPError as error:
                return self._unreachable(outcome, error)
        return self._relay(outcome, reply)

    # -- answers -----------------------------------------------------------------------

    def _relay(self, outcome: _Outcome, reply: httpx2.Response) -> Response:
        first_byte = time.perf_counter()
        content_type = reply.headers.get("content-type", "")
        streamed = content_type.startswith("text/event-stream")
        tap = UsageTap() if outcome.learns(reply.status_code) else None

        async def body() -> AsyncIterator[bytes]:
            error: str | None = None
            try:
                async for chunk in reply.aiter_raw():
                    if tap is not None:
                        tap.feed(chunk)
                    yield chunk
            except httpx2.HTTPError as failure:
                error = f"upstream stream broke: {type(failure).__name__}"
                raise
            except BaseException:
                error = "client went away"
                raise
            finally:
                with anyio.CancelScope(shield=True):
                    await reply.aclose()
                theirs = None
                if tap is not None:  # a count stated before a break is still the count
                    encoding = reply.headers.get("content-encoding")
                    theirs = tap.prompt_tokens(content_type=content_type, content_encoding=encoding)
                    self._learn_count(outcome, theirs)
                record = outcome.record(reply.status_code, first_byte, streamed, error, theirs)
                self.journal.add(record)

        response = StreamingResponse(body(), status_code=reply.status_code)
        response.raw_headers = _encode(
            response_headers(reply.headers.multi_items(), outcome.extra())
        )
        return response

    def _learn_count(self, outcome: _Outcome, theirs: int | None) -> None:
        """The provider's count of what was sent, against condense's: the next requests
        to that upstream and model are planned with the ratio."""
        ours = outcome.tokens_sent()
        if theirs is not None and ours is not None:
            self.learned.observe(outcome.upstream.url, outcome.model(), theirs=theirs, ours=ours)

    def _whole(self, outcome: _Outcome, reply: httpx2.Response, raw: bytes) -> Response:
        now = time.perf_counter()
        self.journal.add(outcome.record(reply.status_code, now, False, None, None))
        pairs = [
            (name, value)
            for name, value in reply.headers.multi_items()
            if name.lower() != "content-length"
        ]
        pairs.append(("content-length", str(len(raw))))
        response = Response(raw, status_code=reply.status_code)
        response.raw_headers = _encode(response_headers(pairs, outcome.extra()))
        return response

    def _unreachable(self, outcome: _Outcome, error: httpx2.HTTPError) -> Response:
        timeout = isinstance(error, httpx2.TimeoutException)
        status = 504 if timeout else 502
        what = "did not answer in time" if timeout else "could not be reached"
        message = (
            f"condense proxy: the upstream {outcome.upstream.base} {what} "
            f"({type(error).__name__}: {error or 'no detail'})"
        )
        self.journal.add(outcome.record(status, time.perf_counter(), False, message, None))
        return _error(outcome.api, status, message)

    def _log_refused(
        self, request: Request, path: str, api: Api, bad: BadRequest, started: float
    ) -> None:
        now = time.perf_counter()
        self.journal.add(
            Record(
                id=0,
                time=time.time(),
                method=request.method,
                path=path,
                api=api.name,
                model=None,
                provider=None,
                upstream="",
                status=bad.status,
                stream=False,
                latency_ms=round((now - started) * 1000, 3),
                duration_ms=round((now - started) * 1000, 3),
                error=bad.message,
            )
        )


class _Outcome:
    """What one request went through, for its headers and its journal record."""

    def __init__(
        self,
        request: Request,
        path: str,
        api: Api | None,
        upstream: Upstream,
        prepared: Prepared | None,
        started: float,
        notes: tuple[str, ...],
    ) -> None:
        self.request = request
        self.path = path
        self.api = api
        self.upstream = upstream
        self.prepared = prepared
        self.started = started
        self.notes = notes
        self.retry: Retry | None = None

    def extra(self) -> dict[str, str]:
        """``x-condense-*`` headers: set only when the proxy changed the request."""
        p, retry = self.prepared, self.retry
        if p is None or not (p.changed or retry):
            return {}
        headers = {"x-condense-provider": p.provider}
        if p.repairs:
            headers["x-condense-repaired"] = str(p.repairs)
        if p.compressed or p.reused or (retry is not None and retry.compressed):
            headers["x-condense-compressed"] = f"{p.tokens_before}->{self.tokens_sent()}"
        if p.reused:
            headers["x-condense-reused"] = "compressed-head"
        if retry is not None:
            reason = f"{retry.diagnosis.category.value}; {retry.detail}"
            headers["x-condense-retried"] = reason.encode("ascii", "replace").decode()
        return headers

    def learns(self, status: int) -> bool:
        """Whether the answer states the provider's count of a request condense counted."""
        return status == 200 and self.tokens_sent() is not None

    def tokens_sent(self) -> int | None:
        """Condense's count of the request the upstream answered (the retry's, if any)."""
        if self.retry is not None:
            return self.retry.tokens_after
        return self.prepared.tokens_after if self.prepared is not None else None

    def model(self) -> str | None:
        return self.prepared.model if self.prepared is not None else None

    def record(
        self,
        status: int,
        first_byte: float,
        stream: bool,
        error: str | None,
        provider_tokens: int | None,
    ) -> Record:
        p, retry, now = self.prepared, self.retry, time.perf_counter()
        after = self.tokens_sent()
        compressed = bool(p and (p.compressed or p.reused)) or bool(retry and retry.compressed)
        return Record(
            id=0,
            time=time.time(),
            method=self.request.method,
            path=self.path,
            api=self.api.name if self.api else None,
            model=p.model if p else None,
            provider=p.provider if p else None,
            upstream=self.upstream.base,
            status=status,
            stream=stream,
            latency_ms=round((first_byte - self.started) * 1000, 3),
            duration_ms=round((now - self.started) * 1000, 3),
            tokens_before=p.tokens_before if p else None,
            tokens_after=after,
            provider_tokens=provider_tokens,
            window=p.window if p else None,
            repairs=(p.repairs if p else 0) + (retry.repairs if retry else 0),
            compressed=compressed,
            reused=bool(p and p.reused),
            retried=retry is not None,
            retry=f"{retry.diagnosis.category.value}: {retry.detail}" if retry else None,
            error=error,
            notes=self.notes + (p.notes if p else ()),
        )


def create_app(settings: ProxySettings, *, log_stream: TextIO | None = None) -> Starlette:
    """The proxy app for ``settings``; ``log_stream`` takes the JSON lines when no log
    file is set (default stderr)."""
    proxy = Proxy(settings, log_stream=log_stream)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await proxy.aclose()

    routes = [
        Route("/healthz", proxy.health, methods=["GET", "HEAD"]),
        Route("/condense", lambda request: RedirectResponse("/condense/"), methods=["GET"]),
        Route("/condense/", proxy.page, methods=["GET"]),
        Route("/condense/api/requests", proxy.feed, methods=["GET"]),
        Route("/{path:path}", proxy.forward, methods=_METHODS),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.proxy = proxy
    return app


# -- helpers -------------------------------------------------------------------------------


def _raw_path(request: Request) -> str:
    raw = request.scope.get("raw_path")
    if isinstance(raw, bytes) and raw:
        return raw.decode("latin-1").split("?", 1)[0]
    return str(request.scope["path"])


async def _read_raw(reply: httpx2.Response) -> bytes:
    try:
        return b"".join([chunk async for chunk in reply.aiter_raw()])
    finally:
        await reply.aclose()


def _error(api: Api | None, status: int, message: str) -> Response:
    return Response(
        error_bytes(api, status, message), status_code=status, media_type="application/json"
    )


def _websocket_refused(api: Api | None) -> Response:
    message = (
        "condense proxy speaks HTTP and server-sent events, not WebSocket; the client should "
        "fall back to HTTP (Codex: set supports_websockets = false for this provider)"
    )
    response = _error(api, 426, message)
    response.headers["connection"] = "close"
    return response


def _encode(pairs: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in pairs]
