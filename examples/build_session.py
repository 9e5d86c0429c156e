#!/usr/bin/env python3
"""Build examples/session.json: a long, realistic coding-agent session to compress.

The session is an OpenAI Chat Completions message list in which an agent ("Forge")
debugs ORD-4102 "total mismatch" checkouts in ``orders-svc``, a small fictional Python
service: it explores the repository, reads a 64k-character log, reproduces the bug, writes
a regression test that fails (``1 failed, 42 passed``), tries a fix that does not work,
fixes it properly, handles a follow-up from the user about a Japanese receipt, and
finishes with a green test run and a summary. The same conversation is also written in
Anthropic Messages format (``session_anthropic.json``).

Every tool result is computed rather than typed in: the fictional repository below is
held in memory, ``read_file``/``ls``/``grep`` run against it, ``str_replace_editor``
edits it, and ``git diff`` and the pytest reports are rendered from its current state.
Only what cannot be computed without running Python (the output of ad-hoc scripts, and
the assertion details pytest prints) is written out by hand; the numbers in it were
checked against the real code with ``--materialize``.

Usage::

    python examples/build_session.py                   # writes the two JSON files
    python examples/build_session.py --materialize DIR # also writes the repository as
                                                       # it stood at every command run

Standard library only; the output is byte-for-byte the same on every run. The numbers of
the 2.14.0 discount bug in the log are computed by ``v2_14_totals``, a copy of the buggy
arithmetic, so the ORD-4102 lines appear for exactly the carts it would have rejected.
"""

# The repository files embedded below keep their own long lines and trailing blanks.
# ruff: noqa: E501, W293

from __future__ import annotations

import argparse
import difflib
import fnmatch
import hashlib
import json
import random
import re
import sys
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path

SEED = 20240422
ROOT = "/home/dev/orders-svc"
HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------------------
# The fictional repository, as it stands at the start of the session (tag v2.14.0).
# --------------------------------------------------------------------------------------

FILES: dict[str, str] = {}

FILES[".github/workflows/ci.yml"] = r"""
name: ci
on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: pip install -e '.[dev]'
      - run: make lint
      - run: make test
"""[1:]

FILES[".gitignore"] = r"""
__pycache__/
*.pyc
.venv/
.pytest_cache/
.mypy_cache/
.ruff_cache/
var/
*.sqlite3
"""[1:]

FILES["CHANGELOG.md"] = r"""
# Changelog

All notable changes to orders-svc. Dates are deploy dates (JST).

## 2.14.0 — 2024-04-16

- Promotion discounts are allocated across lines in proportion to their subtotals (#412).
  Partial refunds now give back the discounted line price, and Paylane receives per-line
  totals.
- Paylane authorizations carry line items (#409); required for the BNPL methods launching
  in JP in May.
- Checkout verifies that the line items add up to the total before authorizing, and fails
  with ORD-4102 instead of letting Paylane reject the payment after a card hold (#407).
- Receipts show the promotion code and the discount (#405).
- Promotions can be limited to one use per customer (#401).
- Japanese strings for the spring campaign (#398).

## 2.13.2 — 2024-04-02

- KRW and TWD currencies; KRW is sold in the .kr storefront (#396).
- Fix: `format_money` used a narrow no-break space for French only when the amount had
  four or more digits (#393).

## 2.13.1 — 2024-03-21

- Fix: idempotent replays of a failed checkout returned 201 instead of the original
  error (#388).
- Gateway timeouts are reported as ORD-4105 with status 504 (was 500) (#386).

## 2.13.0 — 2024-03-07

- SQLite store: `failures(code, since)` for the support console (#379).
- Free-shipping threshold is checked against the discounted subtotal, as the storefront
  shows it (#375).
- Promotions: `min_subtotal` per currency (#371).

## 2.12.0 — 2024-02-13

- US sales tax on the discounted subtotal plus shipping (#362).
- Amounts are stored as strings in the quote JSON (#358).

## 2.11.0 — 2024-01-23

- Receipts align columns by display width, so Japanese product names line up (#349).
- Error responses carry a localised `message` (#344).
"""[1:]

FILES["Dockerfile"] = r"""
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml ./
COPY orders ./orders
COPY locales ./locales
COPY config ./config
RUN pip install --no-cache-dir .

ENV ORDERS_ENV=production ORDERS_DB=/data/orders.sqlite3
EXPOSE 8080
CMD ["uvicorn", "orders.app:create_app", "--factory", "--host", "0.0.0.0", "--port", "8080"]
"""[1:]

FILES["Makefile"] = r"""
.PHONY: test lint run image

test:
	python -m pytest

lint:
	ruff check orders tests
	mypy

run:
	ORDERS_ENV=dev uvicorn orders.app:create_app --factory --reload --port 8080

image:
	docker build -t registry.tealeaf.example/orders-svc:$$(git describe --tags) .
"""[1:]

FILES["README.md"] = r"""
# orders-svc

Carts, quotes, checkout and receipts for the Tealeaf storefront (tealeaf.example, .jp, .kr).
The storefront and the mobile app call this service; it talks to Paylane for payments and
writes orders to SQLite, which the nightly ledger export reads.

## Layout

| path                    | what                                                            |
|-------------------------|-----------------------------------------------------------------|
| `orders/pricing.py`     | cart → quote: discount, per-line allocation, shipping, tax      |
| `orders/promotions.py`  | promotion codes and their validation (PRM-20xx)                 |
| `orders/checkout.py`    | quote, verify, authorize with Paylane, store (ORD-41xx)         |
| `orders/refunds.py`     | full and per-line refunds                                       |
| `orders/receipts.py`    | plain-text receipts for the confirmation e-mail                 |
| `orders/currency.py`    | currency exponents, half-up rounding, minor units, formatting   |
| `orders/payments/`      | Paylane client and an in-memory fake with the same rules        |
| `orders/api/`           | framework-free handlers; `orders/app.py` mounts them on FastAPI |
| `locales/`              | receipt, e-mail and error strings (en, ja, de)                  |
| `config/`               | promotions.json (synced from the marketing sheet)               |

## Development

    python -m venv .venv && . .venv/bin/activate
    pip install -e '.[dev]'
    make test        # pytest
    make lint        # ruff + mypy
    make run         # uvicorn on :8080 with the fake gateway

Tests never talk to Paylane: `FakeGateway` applies Paylane's validation rules (line items
must add up to the amount, amounts in minor units) so that mismatches fail locally.

## Money rules

* All amounts are `Decimal` in major units; never `float`.
* Prices are whole minor units of their currency (no fractional yen, no tenths of a cent).
* Round with `orders.currency.quantize` (half-up). The `decimal` module's default
  rounding is half-even; do not call `.quantize()` without a rounding mode.
* Convert to integer minor units only at the edge (`to_minor`), and only amounts that are
  already rounded.

## Error codes

See `orders/errors.py`. Codes are stable and are shown to customers in localised
messages (`locales/*.json`, key `error.<code>`). The on-call runbook (`docs/runbook.md`)
says what to do for each one.

## Releases

Tag `vX.Y.Z` on main; CI builds the image and Argo deploys it to staging, then to
production after the smoke tests. Note user-visible changes in `CHANGELOG.md`.
"""[1:]

FILES["config/promotions.json"] = r"""
{
  "synced_at": "2024-04-15T18:00:00+09:00",
  "promotions": [
    {"code": "SPRING15", "kind": "percent", "value": 15,
     "starts_at": "2024-04-01T00:00:00+09:00", "ends_at": "2024-05-07T00:00:00+09:00"},
    {"code": "WELCOME10", "kind": "percent", "value": 10, "once_per_customer": true},
    {"code": "TEA500", "kind": "fixed", "value": "500", "currencies": ["JPY"],
     "min_subtotal": {"JPY": 3000}},
    {"code": "SAVE5", "kind": "fixed", "value": "5.00", "currencies": ["USD"],
     "min_subtotal": {"USD": 40}},
    {"code": "FREESHIP", "kind": "free_shipping"},
    {"code": "WINTER20", "kind": "percent", "value": 20,
     "ends_at": "2024-03-01T00:00:00+00:00"},
    {"code": "MATCHA-DAY", "kind": "percent", "value": 20, "max_uses": 500,
     "starts_at": "2024-05-02T00:00:00+09:00", "ends_at": "2024-05-03T00:00:00+09:00"}
  ]
}
"""[1:]

FILES["docs/runbook.md"] = r"""
# orders-svc on-call runbook

Dashboards: Grafana › Storefront › Checkout. Logs: `kubectl logs -l app=orders-svc`.
Errors in Sentry project `orders-svc`, tagged with the error code.

## ORD-4102 total mismatch

Checkout refused to authorize because the line items sent to Paylane would not add up to
the order total. The customer sees "we could not calculate your payment total". No money
moved and no card hold was placed.

* A few a week: look for a quote with odd inputs (fractional prices from a bad catalogue
  import, a negative line) with `orders-admin explain <order id>`.
* A sustained rate: a pricing bug. Page the payments on-call and consider disabling the
  promotion involved (`orders-admin promo disable CODE`); the customer can retry without
  the code.

## ORD-4104 payment declined

Normal at a low rate (2–4%). A spike usually means Paylane's risk rules changed; check
their status page before paging.

## ORD-4105 payment gateway timeout

Paylane did not answer within `PAYLANE_TIMEOUT`. Retries with the same idempotency key are
safe. Above 1% for 10 minutes: page payments on-call.

## PRM-2002 promotion expired

Expected after a campaign ends; if marketing extended the campaign, check that
`config/promotions.json` was synced and the pods restarted.
"""[1:]

FILES["locales/de.json"] = r"""
{
  "receipt.title": "Tealeaf-Bestellung {order_id}",
  "receipt.line": "{name} x {quantity}",
  "receipt.subtotal": "Zwischensumme",
  "receipt.discount": "Rabatt ({code})",
  "receipt.shipping": "Versand",
  "receipt.shipping_free": "Kostenlos",
  "receipt.tax": "MwSt.",
  "receipt.tax_included": "(alle Preise inkl. MwSt.)",
  "receipt.total": "Gesamt",
  "receipt.thanks": "Vielen Dank für Ihren Einkauf bei Tealeaf.",
  "receipt.footer": "Rücksendungen und Umtausch: bitte innerhalb von 14 Tagen nach Lieferung den Support kontaktieren.",
  "email.subject": "Ihre Tealeaf-Bestellung {order_id}",
  "email.greeting": "Hallo {name},",
  "email.shipped": "Gute Nachrichten: Ihre Bestellung ist unterwegs. Sendungsnummer: {tracking}",
  "email.refund": "Wir haben {amount} auf Ihre ursprüngliche Zahlungsmethode erstattet. Es kann 5-10 Werktage dauern, bis der Betrag sichtbar ist.",
  "error.ORD-4102": "Wir konnten Ihren Zahlungsbetrag nicht berechnen. Bitte versuchen Sie es gleich noch einmal. (Fehlercode: ORD-4102)",
  "error.ORD-4104": "Ihre Zahlung wurde abgelehnt. Bitte prüfen Sie Ihre Kartendaten oder wählen Sie eine andere Zahlungsart.",
  "error.PRM-2002": "Dieser Gutscheincode ist abgelaufen."
}
"""[1:]

FILES["locales/en.json"] = r"""
{
  "receipt.title": "Tealeaf order {order_id}",
  "receipt.line": "{name} x {quantity}",
  "receipt.subtotal": "Subtotal",
  "receipt.discount": "Discount ({code})",
  "receipt.shipping": "Shipping",
  "receipt.shipping_free": "Free",
  "receipt.tax": "Sales tax",
  "receipt.tax_included": "(prices include tax)",
  "receipt.total": "Total",
  "receipt.thanks": "Thank you for shopping with Tealeaf.",
  "receipt.footer": "Returns and exchanges: contact support within 14 days of delivery.",
  "email.subject": "Your Tealeaf order {order_id}",
  "email.greeting": "Hi {name},",
  "email.shipped": "Good news: your order is on its way. Tracking number: {tracking}",
  "email.refund": "We have refunded {amount} to your original payment method. It can take 5-10 business days to appear.",
  "error.ORD-4100": "Something in your cart is not right. Please review it and try again.",
  "error.ORD-4101": "Your cart is empty.",
  "error.ORD-4102": "We could not calculate your payment total. Please try again in a moment. (Error code: ORD-4102)",
  "error.ORD-4103": "We do not accept payments in this currency.",
  "error.ORD-4104": "Your payment was declined. Please check your card details or use another payment method.",
  "error.ORD-4105": "The payment service is not responding. You have not been charged; please try again.",
  "error.ORD-4106": "This checkout was already submitted.",
  "error.PRM-2001": "That promo code does not exist.",
  "error.PRM-2002": "That promo code has expired.",
  "error.PRM-2003": "That promo code is not valid in your region.",
  "error.PRM-2004": "Your order does not reach the minimum for this promo code.",
  "error.PRM-2005": "That promo code has already been used."
}
"""[1:]

FILES["locales/ja.json"] = r"""
{
  "receipt.title": "ご注文明細 {order_id}",
  "receipt.line": "{name} × {quantity}",
  "receipt.subtotal": "小計",
  "receipt.discount": "割引（{code}）",
  "receipt.shipping": "送料",
  "receipt.shipping_free": "無料",
  "receipt.tax": "消費税",
  "receipt.tax_included": "※表示価格はすべて税込です。",
  "receipt.total": "合計",
  "receipt.thanks": "Tealeafをご利用いただき、誠にありがとうございます。",
  "receipt.footer": "返品・交換は商品到着後14日以内にカスタマーサポートまでご連絡ください。",
  "email.subject": "【Tealeaf】ご注文ありがとうございます（{order_id}）",
  "email.greeting": "{name} 様",
  "email.shipped": "ご注文の商品を発送いたしました。お問い合わせ伝票番号：{tracking}",
  "email.refund": "{amount}をご利用のお支払い方法に返金いたしました。反映までに5〜10営業日かかる場合がございます。",
  "error.ORD-4100": "カートの内容に問題があります。内容をご確認のうえ、もう一度お試しください。",
  "error.ORD-4101": "カートに商品が入っていません。",
  "error.ORD-4102": "お支払い金額を計算できませんでした。お手数ですが、しばらくしてから再度お試しください。（エラーコード：ORD-4102）",
  "error.ORD-4103": "この通貨でのお支払いには対応しておりません。",
  "error.ORD-4104": "お支払いが承認されませんでした。カード情報をご確認いただくか、別のお支払い方法をご利用ください。",
  "error.ORD-4105": "決済サービスが応答していません。料金は請求されていません。もう一度お試しください。",
  "error.ORD-4106": "このご注文はすでに送信されています。",
  "error.PRM-2001": "このクーポンコードは存在しません。",
  "error.PRM-2002": "このクーポンコードは有効期限が切れています。",
  "error.PRM-2003": "このクーポンコードはお住まいの地域ではご利用いただけません。",
  "error.PRM-2004": "ご注文金額がクーポンの最低利用金額に達していません。",
  "error.PRM-2005": "このクーポンコードはすでに使用されています。"
}
"""[1:]

FILES["orders/__init__.py"] = r'''
"""orders-svc: carts, quotes, checkout and receipts for the Tealeaf storefront."""

__version__ = "2.14.0"
'''[1:]

FILES["orders/api/__init__.py"] = r"""
"""[1:]

FILES["orders/api/handlers.py"] = r'''
"""HTTP handlers, framework-free: a JSON payload in, a status and a JSON body out.

``orders.app`` mounts these on FastAPI; tests call them directly with a ``Deps``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from orders.checkout import Clock, checkout, utcnow
from orders.errors import OrderError, ServiceError
from orders.models import ZERO, Cart, LineItem
from orders.payments.gateway import Gateway
from orders.pricing import quote_cart
from orders.promotions import PromotionStore
from orders.receipts import load_strings
from orders.storage import OrderStore

log = logging.getLogger(__name__)

Response = tuple[int, dict[str, Any]]


@dataclass
class Deps:
    promotions: PromotionStore
    gateway: Gateway
    store: OrderStore
    clock: Clock = utcnow


def handle_quote(payload: dict[str, Any], deps: Deps) -> Response:
    try:
        cart = parse_cart(payload)
        promotion = None
        if cart.promo_code:
            subtotal = sum((line.subtotal for line in cart.lines), ZERO)
            promotion = deps.promotions.validate(cart.promo_code, cart, subtotal, deps.clock())
        return 200, quote_cart(cart, promotion).to_dict()
    except ServiceError as error:
        return error_response(error, payload.get("locale", "en"))


def handle_checkout(
    payload: dict[str, Any], deps: Deps, *, idempotency_key: str | None
) -> Response:
    try:
        cart = parse_cart(payload)
        order = checkout(
            cart,
            promotions=deps.promotions,
            gateway=deps.gateway,
            store=deps.store,
            clock=deps.clock,
            idempotency_key=idempotency_key,
        )
    except ServiceError as error:
        return error_response(error, payload.get("locale", "en"))
    return 201, {
        "order_id": order.id,
        "status": order.status.value,
        "payment_ref": order.payment_ref,
        "quote": order.quote.to_dict(),
    }


def handle_get_order(order_id: str, deps: Deps) -> Response:
    order = deps.store.get(order_id)
    if order is None:
        return error_response(OrderError("ORD-4201", order_id), "en")
    return 200, {
        "order_id": order.id,
        "status": order.status.value,
        "failure_code": order.failure_code,
        "created_at": order.created_at.isoformat(),
        "quote": order.quote.to_dict(),
        "refunded": str(order.refunded),
    }


def parse_cart(payload: dict[str, Any]) -> Cart:
    """A Cart from the storefront's JSON; ORD-4100 for anything malformed."""
    try:
        lines = [
            LineItem(
                sku=str(item["sku"]),
                name=str(item.get("name") or item["sku"]),
                quantity=int(item["quantity"]),
                unit_price=Decimal(str(item["unit_price"])),
            )
            for item in payload.get("lines", [])
        ]
        return Cart(
            id=str(payload["cart_id"]),
            currency=str(payload["currency"]).upper(),
            lines=lines,
            customer_id=payload.get("customer_id"),
            promo_code=payload.get("promo_code") or None,
            region=str(payload.get("region", "US")),
            locale=str(payload.get("locale", "en")),
            tax_rate=Decimal(str(payload.get("tax_rate", "0"))),
        )
    except (KeyError, TypeError, ValueError, InvalidOperation) as error:
        raise OrderError("ORD-4100", f"malformed cart: {error}") from None


def error_response(error: ServiceError, locale: str) -> Response:
    body = error.to_dict()
    message = load_strings(locale).get(f"error.{error.code}")
    if message:
        body["message"] = message
    if error.status >= 500 or error.code == "ORD-4102":
        log.error("request failed: %s", error)
    return error.status, body
'''[1:]

FILES["orders/app.py"] = r'''
"""The FastAPI application: wires settings, storage, the gateway and the handlers.

Run locally with ``uvicorn orders.app:create_app --factory --reload``.
"""

from __future__ import annotations

import contextvars
import logging
import uuid
from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.responses import JSONResponse

from orders import __version__
from orders.api.handlers import Deps, handle_checkout, handle_get_order, handle_quote
from orders.config import Settings, load_settings
from orders.payments import FakeGateway, PaylaneClient
from orders.promotions import PromotionStore
from orders.storage import SqliteOrderStore

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [req=%(request_id)s] %(message)s"


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


def configure_logging(settings: Settings) -> None:
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or load_settings()
    configure_logging(settings)
    gateway = (
        FakeGateway()
        if settings.fake_gateway
        else PaylaneClient(settings.paylane_url, settings.paylane_api_key,
                           timeout=settings.paylane_timeout)
    )
    deps = Deps(
        promotions=PromotionStore.from_file(settings.promotions_path),
        gateway=gateway,
        store=SqliteOrderStore(settings.database_path),
    )
    app = FastAPI(title="orders-svc", version=__version__)

    @app.middleware("http")
    async def add_request_id(request: Request, call_next: Any) -> Any:
        token = request_id.set(request.headers.get("X-Request-Id") or uuid.uuid4().hex[:8])
        try:
            response = await call_next(request)
            response.headers["X-Request-Id"] = request_id.get()
            return response
        finally:
            request_id.reset(token)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.post("/v1/quotes")
    def post_quote(payload: dict[str, Any]) -> JSONResponse:
        status, body = handle_quote(payload, deps)
        return JSONResponse(body, status_code=status)

    @app.post("/v1/checkouts")
    def post_checkout(
        payload: dict[str, Any], idempotency_key: str | None = Header(default=None)
    ) -> JSONResponse:
        status, body = handle_checkout(payload, deps, idempotency_key=idempotency_key)
        return JSONResponse(body, status_code=status)

    @app.get("/v1/orders/{order_id}")
    def get_order(order_id: str) -> JSONResponse:
        status, body = handle_get_order(order_id, deps)
        return JSONResponse(body, status_code=status)

    return app
'''[1:]

FILES["orders/checkout.py"] = r'''
"""Checkout: validate the promotion, quote the cart, authorize the payment, store the order.

Failed checkouts are stored too (status FAILED with the error code) so that support can
look up an order id the customer quotes from the error page.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import UTC, datetime

from orders.currency import checkout_currency, to_minor
from orders.errors import OrderError, PromotionError
from orders.models import ZERO, Cart, Order, OrderStatus, Quote
from orders.payments.gateway import (
    Gateway,
    GatewayDeclined,
    GatewayTimeout,
    PaymentRequest,
)
from orders.pricing import payment_lines, quote_cart
from orders.promotions import PromotionStore
from orders.storage import OrderStore

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_order_id() -> str:
    return "ord_" + secrets.token_hex(4)


def checkout(
    cart: Cart,
    *,
    promotions: PromotionStore,
    gateway: Gateway,
    store: OrderStore,
    clock: Clock = utcnow,
    idempotency_key: str | None = None,
    order_id: str | None = None,
) -> Order:
    """Authorize payment for ``cart`` and return the stored order.

    Raises OrderError/PromotionError; the order is stored as FAILED before an OrderError
    from the totals check or the gateway propagates.
    """
    now = clock()
    if idempotency_key is not None:
        existing = store.by_idempotency_key(idempotency_key)
        if existing is not None:
            if existing.cart_id != cart.id:
                raise OrderError("ORD-4106", "idempotency key reused for another cart")
            log.info("checkout replay order=%s key=%s", existing.id, idempotency_key)
            return existing

    currency = checkout_currency(cart.currency)
    subtotal = sum((line.subtotal for line in cart.lines), ZERO)
    promotion = None
    if cart.promo_code:
        try:
            promotion = promotions.validate(cart.promo_code, cart, subtotal, now)
        except PromotionError as error:
            log.info("promotion rejected cart=%s code=%s: %s", cart.id, cart.promo_code, error)
            raise

    quote = quote_cart(cart, promotion)
    order = Order(
        id=order_id or new_order_id(),
        cart_id=cart.id,
        customer_id=cart.customer_id,
        quote=quote,
        status=OrderStatus.PENDING,
        created_at=now,
        locale=cart.locale,
    )
    order.record(now, "created")
    log.info(
        "checkout started order=%s cart=%s currency=%s lines=%d promo=%s total=%s",
        order.id, cart.id, currency.code, len(quote.lines), quote.promo_code or "-", quote.total,
    )

    try:
        verify_totals(order.id, quote)
        request = PaymentRequest(
            order_id=order.id,
            currency=currency.code,
            amount_minor=to_minor(quote.total, currency),
            lines=[
                (item.reference, item.label, item.quantity, to_minor(item.amount, currency))
                for item in payment_lines(quote)
            ],
            idempotency_key=idempotency_key or order.id,
        )
        try:
            result = gateway.authorize(request)
        except GatewayTimeout as error:
            raise OrderError("ORD-4105", str(error), order=order.id) from error
        except GatewayDeclined as error:
            raise OrderError("ORD-4104", error.reason, order=order.id) from error
    except OrderError as error:
        order.status = OrderStatus.FAILED
        order.failure_code = error.code
        order.record(now, f"failed {error.code}")
        store.save(order, idempotency_key=idempotency_key)
        raise

    order.status = OrderStatus.AUTHORIZED
    order.payment_ref = result.reference
    order.record(now, f"authorized {result.reference}")
    store.save(order, idempotency_key=idempotency_key)
    if promotion is not None:
        promotions.record_use(promotion, cart.customer_id)
    log.info("authorized order=%s ref=%s amount=%s", order.id, result.reference, quote.total)
    return order


def capture(
    order: Order, *, gateway: Gateway, store: OrderStore, clock: Clock = utcnow
) -> Order:
    """Capture an authorized order when the warehouse ships it (fulfilment webhook).

    Always the full amount: we never ship part of an order. Capturing twice is a no-op, so
    the webhook can be retried safely.
    """
    if order.status is OrderStatus.CAPTURED:
        return order
    if order.status is not OrderStatus.AUTHORIZED or order.payment_ref is None:
        raise OrderError("ORD-4204", f"order {order.id} is {order.status.value}")
    currency = checkout_currency(order.currency)
    now = clock()
    gateway.capture(order.payment_ref, to_minor(order.quote.total, currency))
    order.status = OrderStatus.CAPTURED
    order.record(now, "captured")
    store.save(order)
    log.info("captured order=%s ref=%s amount=%s", order.id, order.payment_ref, order.quote.total)
    return order


def verify_totals(order_id: str, quote: Quote) -> None:
    """ORD-4102 unless the line items add up to the total the customer was shown.

    Paylane rejects an authorization whose line items do not sum to the amount, and it
    does so *after* placing a hold on the card in some regions, so we check first.
    """
    line_sum = quote.line_sum
    if line_sum != quote.total:
        log.warning(
            "ORD-4102 total mismatch order=%s currency=%s line_sum=%s total=%s promo=%s",
            order_id, quote.currency, line_sum, quote.total, quote.promo_code or "-",
        )
        raise OrderError(
            "ORD-4102",
            f"line items sum to {line_sum}, order total is {quote.total}",
            order=order_id,
            currency=quote.currency,
        )
'''[1:]

FILES["orders/config.py"] = r'''
"""Settings from the environment (12-factor). Defaults are for local development."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    env: str
    database_path: Path
    promotions_path: Path
    paylane_url: str
    paylane_api_key: str
    paylane_timeout: float
    log_level: str
    log_json: bool

    @property
    def fake_gateway(self) -> bool:
        return self.env == "dev" and not self.paylane_api_key


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    env = os.environ if environ is None else environ
    return Settings(
        env=env.get("ORDERS_ENV", "dev"),
        database_path=Path(env.get("ORDERS_DB", "var/orders.sqlite3")),
        promotions_path=Path(env.get("ORDERS_PROMOTIONS", "config/promotions.json")),
        paylane_url=env.get("PAYLANE_URL", "https://api.sandbox.paylane.example"),
        paylane_api_key=env.get("PAYLANE_API_KEY", ""),
        paylane_timeout=float(env.get("PAYLANE_TIMEOUT", "8")),
        log_level=env.get("ORDERS_LOG_LEVEL", "INFO"),
        log_json=env.get("ORDERS_LOG_JSON", "0") == "1",
    )
'''[1:]

FILES["orders/currency.py"] = r'''
"""Currency metadata, rounding and money formatting.

Amounts are ``Decimal`` values in major units (dollars, euros, yen). Every currency has an
*exponent*: the number of digits after the decimal point in its minor unit -- 2 for USD,
0 for JPY and KRW, 3 for KWD. Anything that leaves the service (the payment gateway, the
ledger export) works in integer minor units; convert with ``to_minor``/``from_minor``.

Rounding: money is rounded half-up (away from zero on a tie), which is what Paylane and
the finance team's ledger do. Do not rely on the ``decimal`` module's default context,
which rounds half-even.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from orders.errors import OrderError


@dataclass(frozen=True)
class Currency:
    code: str
    exponent: int
    symbol: str
    name: str

    @property
    def quantum(self) -> Decimal:
        """The smallest amount of this currency: Decimal('0.01') for USD, Decimal('1') for JPY."""
        return Decimal(1).scaleb(-self.exponent)


CURRENCIES: dict[str, Currency] = {
    currency.code: currency
    for currency in (
        Currency("USD", 2, "$", "US dollar"),
        Currency("EUR", 2, "€", "Euro"),
        Currency("GBP", 2, "£", "Pound sterling"),
        Currency("CAD", 2, "CA$", "Canadian dollar"),
        Currency("AUD", 2, "A$", "Australian dollar"),
        Currency("CHF", 2, "CHF ", "Swiss franc"),
        Currency("SEK", 2, "kr ", "Swedish krona"),
        Currency("DKK", 2, "kr. ", "Danish krone"),
        Currency("PLN", 2, "zł ", "Polish złoty"),
        Currency("JPY", 0, "¥", "Japanese yen"),
        Currency("KRW", 0, "₩", "South Korean won"),
        Currency("TWD", 0, "NT$", "New Taiwan dollar"),
        Currency("ISK", 0, "kr ", "Icelandic króna"),
        Currency("KWD", 3, "KD ", "Kuwaiti dinar"),
        Currency("BHD", 3, "BD ", "Bahraini dinar"),
    )
}

# Storefront regions we actually sell in. The others are known so that amounts coming back
# from the gateway (refunds of old orders, chargebacks) can still be formatted.
CHECKOUT_CURRENCIES = frozenset({"USD", "EUR", "GBP", "CAD", "AUD", "JPY", "KRW"})

# (thousands separator, decimal separator) per receipt locale.
_SEPARATORS: dict[str, tuple[str, str]] = {
    "en": (",", "."),
    "ja": (",", "."),
    "ko": (",", "."),
    "de": (".", ","),
    "fr": ("\u202f", ","),
}


def get_currency(code: str) -> Currency:
    """The currency for an ISO 4217 code; ORD-4103 for one we do not know."""
    try:
        return CURRENCIES[code.upper()]
    except KeyError:
        raise OrderError("ORD-4103", f"unknown currency {code!r}") from None


def checkout_currency(code: str) -> Currency:
    """Like ``get_currency`` but only for currencies the storefront takes payment in."""
    currency = get_currency(code)
    if currency.code not in CHECKOUT_CURRENCIES:
        raise OrderError("ORD-4103", f"{currency.code} is not sold in any storefront region")
    return currency


def quantize(amount: Decimal, currency: Currency) -> Decimal:
    """``amount`` rounded half-up to the currency's minor unit."""
    return amount.quantize(currency.quantum, rounding=ROUND_HALF_UP)


def is_whole(amount: Decimal, currency: Currency) -> bool:
    """True when ``amount`` is a whole number of minor units (no rounding needed)."""
    return amount == amount.quantize(currency.quantum)


def to_minor(amount: Decimal, currency: Currency) -> int:
    """Integer minor units for an amount that is already rounded; ValueError otherwise."""
    if not is_whole(amount, currency):
        raise ValueError(f"{amount} {currency.code} is not a whole number of minor units")
    return int(amount.scaleb(currency.exponent))


def from_minor(units: int, currency: Currency) -> Decimal:
    """The amount for ``units`` minor units: from_minor(1250, USD) == Decimal('12.50')."""
    return Decimal(units).scaleb(-currency.exponent).quantize(currency.quantum)


def format_money(amount: Decimal, currency: Currency | str, *, locale: str = "en") -> str:
    """``amount`` as a customer sees it: '$1,234.50', '1.234,50 €', '11,543円'."""
    if isinstance(currency, str):
        currency = get_currency(currency)
    value = quantize(amount, currency)
    sign = "-" if value < 0 else ""
    digits = f"{abs(value):,.{currency.exponent}f}"
    group, point = _SEPARATORS.get(locale, _SEPARATORS["en"])
    digits = digits.replace(",", "\0").replace(".", point).replace("\0", group)
    if locale == "ja" and currency.code == "JPY":
        return f"{sign}{digits}円"
    if locale == "ko" and currency.code == "KRW":
        return f"{sign}{digits}원"
    if locale in ("de", "fr"):
        return f"{sign}{digits} {currency.symbol.strip()}"
    return f"{sign}{currency.symbol}{digits}"
'''[1:]

FILES["orders/errors.py"] = r'''
"""Error codes returned by the orders service.

Codes are stable: the storefront, the mobile app and the support tooling switch on them,
so never reuse or renumber one. ORD-41xx are checkout failures, ORD-42xx belong to the
order lifecycle (refunds, lookups) and PRM-20xx to promotions.
"""

from __future__ import annotations

from typing import Any

ERROR_CODES: dict[str, tuple[int, str]] = {
    "ORD-4100": (400, "invalid cart"),
    "ORD-4101": (400, "cart is empty"),
    "ORD-4102": (409, "total mismatch"),
    "ORD-4103": (400, "currency not supported"),
    "ORD-4104": (402, "payment declined"),
    "ORD-4105": (504, "payment gateway timeout"),
    "ORD-4106": (409, "duplicate checkout"),
    "ORD-4201": (404, "order not found"),
    "ORD-4202": (409, "order cannot be refunded in its current state"),
    "ORD-4203": (400, "refund exceeds captured amount"),
    "ORD-4204": (409, "order cannot be captured in its current state"),
    "PRM-2001": (404, "promotion code not found"),
    "PRM-2002": (400, "promotion expired"),
    "PRM-2003": (400, "promotion not valid for this currency"),
    "PRM-2004": (400, "order below promotion minimum"),
    "PRM-2005": (409, "promotion usage limit reached"),
}


class ServiceError(Exception):
    """An error with a stable code, an HTTP status and optional context for the logs."""

    def __init__(self, code: str, detail: str = "", **context: Any) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        self.code = code
        self.status, self.title = ERROR_CODES[code]
        self.detail = detail
        self.context = context
        message = f"{code} {self.title}"
        if detail:
            message += f": {detail}"
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        """The JSON body the API returns for this error."""
        body: dict[str, Any] = {"code": self.code, "title": self.title}
        if self.detail:
            body["detail"] = self.detail
        if self.context:
            body["context"] = {key: str(value) for key, value in sorted(self.context.items())}
        return body


class OrderError(ServiceError):
    """A checkout or order lifecycle failure (ORD-4xxx)."""


class PromotionError(ServiceError):
    """A promotion code that cannot be applied to a cart (PRM-20xx)."""
'''[1:]

FILES["orders/models.py"] = r'''
"""Data types shared by pricing, checkout, storage and the API.

Everything money-like is a ``Decimal`` in major units of the cart's currency. Quotes and
priced lines are immutable: a quote is what the customer agreed to pay, and checkout
refuses to continue when a quote does not add up (ORD-4102).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

ZERO = Decimal(0)


@dataclass(frozen=True)
class LineItem:
    """One product line of a cart as the storefront sends it."""

    sku: str
    name: str
    quantity: int
    unit_price: Decimal

    def __post_init__(self) -> None:
        if self.quantity <= 0:
            raise ValueError(f"{self.sku}: quantity must be positive, got {self.quantity}")
        if self.unit_price < 0:
            raise ValueError(f"{self.sku}: unit price must not be negative")

    @property
    def subtotal(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Cart:
    id: str
    currency: str
    lines: list[LineItem]
    customer_id: str | None = None
    promo_code: str | None = None
    region: str = "US"
    locale: str = "en"
    tax_rate: Decimal = ZERO  # US sales tax; prices in JP/KR/EU storefronts include tax

    def __iter__(self) -> Iterator[LineItem]:
        return iter(self.lines)

    @property
    def item_count(self) -> int:
        return sum(line.quantity for line in self.lines)


@dataclass(frozen=True)
class PricedLine:
    """A cart line after promotions: ``total == subtotal - discount``."""

    sku: str
    name: str
    quantity: int
    unit_price: Decimal
    subtotal: Decimal
    discount: Decimal
    total: Decimal


@dataclass(frozen=True)
class Quote:
    """What the customer pays, with the per-line breakdown sent to the payment gateway."""

    currency: str
    lines: tuple[PricedLine, ...]
    subtotal: Decimal
    discount: Decimal
    shipping: Decimal
    tax: Decimal
    total: Decimal
    promo_code: str | None = None

    @property
    def line_sum(self) -> Decimal:
        """Sum of the line totals plus shipping and tax: must equal ``total``."""
        return sum((line.total for line in self.lines), ZERO) + self.shipping + self.tax

    def to_dict(self) -> dict[str, Any]:
        return {
            "currency": self.currency,
            "lines": [
                {
                    "sku": line.sku,
                    "name": line.name,
                    "quantity": line.quantity,
                    "unit_price": str(line.unit_price),
                    "subtotal": str(line.subtotal),
                    "discount": str(line.discount),
                    "total": str(line.total),
                }
                for line in self.lines
            ],
            "subtotal": str(self.subtotal),
            "discount": str(self.discount),
            "shipping": str(self.shipping),
            "tax": str(self.tax),
            "total": str(self.total),
            "promo_code": self.promo_code,
        }


class OrderStatus(enum.StrEnum):
    PENDING = "pending"
    AUTHORIZED = "authorized"
    CAPTURED = "captured"
    FAILED = "failed"
    PARTIALLY_REFUNDED = "partially_refunded"
    REFUNDED = "refunded"


@dataclass
class Order:
    id: str
    cart_id: str
    customer_id: str | None
    quote: Quote
    status: OrderStatus
    created_at: datetime
    locale: str = "en"
    payment_ref: str | None = None
    failure_code: str | None = None
    refunded: Decimal = ZERO
    events: list[tuple[datetime, str]] = field(default_factory=list)

    @property
    def currency(self) -> str:
        return self.quote.currency

    @property
    def refundable(self) -> Decimal:
        return self.quote.total - self.refunded

    def record(self, when: datetime, event: str) -> None:
        self.events.append((when, event))
'''[1:]

FILES["orders/payments/__init__.py"] = r'''
"""Payment gateway clients (Paylane in production, FakeGateway in tests and local dev)."""

from orders.payments.fake import FakeGateway
from orders.payments.gateway import (
    Authorization,
    Gateway,
    GatewayDeclined,
    GatewayTimeout,
    PaylaneClient,
    PaymentRequest,
)

__all__ = [
    "Authorization",
    "FakeGateway",
    "Gateway",
    "GatewayDeclined",
    "GatewayTimeout",
    "PaylaneClient",
    "PaymentRequest",
]
'''[1:]

FILES["orders/payments/fake.py"] = r'''
"""An in-memory gateway with Paylane's validation rules, for tests and local development."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from orders.payments.gateway import Authorization, GatewayDeclined, GatewayTimeout, PaymentRequest


@dataclass
class FakeGateway:
    decline_reason: str | None = None
    timeout: bool = False
    requests: list[PaymentRequest] = field(default_factory=list)
    captures: list[tuple[str, int]] = field(default_factory=list)
    refunds: list[tuple[str, int, str]] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def authorize(self, request: PaymentRequest) -> Authorization:
        self.requests.append(request)
        if self.timeout:
            raise GatewayTimeout("POST /v3/payments timed out after 8.0s")
        if sum(line[3] for line in request.lines) != request.amount_minor:
            raise GatewayDeclined("line_items_mismatch", 422)
        if self.decline_reason:
            raise GatewayDeclined(self.decline_reason)
        reference = f"pl_test_{next(self._ids):06d}"
        return Authorization(reference, request.amount_minor, request.currency)

    def capture(self, reference: str, amount_minor: int) -> None:
        self.captures.append((reference, amount_minor))

    def refund(self, reference: str, amount_minor: int, reason: str) -> str:
        self.refunds.append((reference, amount_minor, reason))
        return f"rf_test_{len(self.refunds):06d}"
'''[1:]

FILES["orders/payments/gateway.py"] = r'''
"""Paylane client: authorize, capture and refund, in integer minor units.

Paylane API reference: https://docs.paylane.example/v3/payments. Every amount is an
integer number of minor units of the payment's currency; for an authorization the line
items must add up to ``amount`` exactly or the call fails with ``line_items_mismatch``.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

# (reference, label, quantity, amount in minor units)
LineTuple = tuple[str, str, int, int]


@dataclass(frozen=True)
class PaymentRequest:
    order_id: str
    currency: str
    amount_minor: int
    lines: list[LineTuple] = field(default_factory=list)
    idempotency_key: str | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "merchant_reference": self.order_id,
            "currency": self.currency,
            "amount": self.amount_minor,
            "line_items": [
                {"reference": ref, "name": label, "quantity": qty, "total_amount": amount}
                for ref, label, qty, amount in self.lines
            ],
            "capture": "manual",
        }


@dataclass(frozen=True)
class Authorization:
    reference: str
    amount_minor: int
    currency: str


class GatewayTimeout(Exception):
    """Paylane did not answer in time; the authorization may or may not exist."""


class GatewayDeclined(Exception):
    def __init__(self, reason: str, status: int = 402) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class Gateway(Protocol):
    def authorize(self, request: PaymentRequest) -> Authorization: ...

    def capture(self, reference: str, amount_minor: int) -> None: ...

    def refund(self, reference: str, amount_minor: int, reason: str) -> str: ...


class PaylaneClient:
    """The production gateway. Retries idempotent calls on connection errors only."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 8.0,
        retries: int = 2,
        backoff: float = 0.4,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    def authorize(self, request: PaymentRequest) -> Authorization:
        body = self._call(
            "POST", "/v3/payments", request.payload(), idempotency_key=request.idempotency_key
        )
        return Authorization(body["id"], body["amount"], body["currency"])

    def capture(self, reference: str, amount_minor: int) -> None:
        self._call("POST", f"/v3/payments/{reference}/captures", {"amount": amount_minor})

    def refund(self, reference: str, amount_minor: int, reason: str) -> str:
        body = self._call(
            "POST", f"/v3/payments/{reference}/refunds", {"amount": amount_minor, "reason": reason}
        )
        return str(body["id"])

    def _call(
        self,
        method: str,
        path: str,
        payload: dict[str, Any],
        *,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        data = json.dumps(payload, separators=(",", ":")).encode()
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Content-Type": "application/json",
            "User-Agent": "orders-svc/2.14",
        }
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            request = urllib.request.Request(
                self.base_url + path, data=data, headers=headers, method=method
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    body: dict[str, Any] = json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as error:
                detail = _error_body(error)
                log.warning("paylane %s %s -> %s %s", method, path, error.code, detail)
                if error.code in (402, 409, 422):
                    raise GatewayDeclined(detail.get("code", "declined"), error.code) from error
                if error.code >= 500 and attempt <= self.retries and idempotency_key:
                    time.sleep(self.backoff * attempt)
                    continue
                raise
            except TimeoutError as error:
                raise GatewayTimeout(f"{method} {path} timed out after {self.timeout}s") from error
            except urllib.error.URLError as error:
                if attempt <= self.retries:
                    log.info("paylane %s %s connection error (%s), retrying", method, path, error)
                    time.sleep(self.backoff * attempt)
                    continue
                raise GatewayTimeout(f"{method} {path}: {error.reason}") from error
            elapsed = (time.monotonic() - started) * 1000
            log.info("paylane %s %s -> ok in %.0fms", method, path, elapsed)
            return body


def _error_body(error: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        body = json.loads(error.read() or b"{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
'''[1:]

FILES["orders/pricing.py"] = r'''
"""Turn a cart into a quote: subtotal, promotion discount, shipping, tax and total.

The quote is computed once per checkout and then never recomputed: the gateway is asked
for exactly ``quote.total`` and is sent ``quote.lines`` (plus shipping and tax) as line
items, which Paylane requires to add up to the amount to the last minor unit.

Order of operations (finance signed this off in FIN-118, do not reorder):

1. line subtotals = unit price x quantity (exact, prices are whole minor units)
2. order discount = the promotion applied to the cart subtotal, rounded once
3. the order discount is allocated across lines in proportion to their subtotals
4. shipping from the region's flat rate, waived above the free-shipping threshold
5. tax (US only) on discounted subtotal + shipping, rounded once
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from orders.currency import Currency, checkout_currency, get_currency, is_whole, quantize
from orders.errors import OrderError
from orders.models import ZERO, Cart, LineItem, PricedLine, Quote
from orders.promotions import Promotion

log = logging.getLogger(__name__)

# Flat shipping per currency and the discounted subtotal above which shipping is free.
SHIPPING: dict[str, tuple[Decimal, Decimal]] = {
    "USD": (Decimal("6.95"), Decimal("75")),
    "CAD": (Decimal("9.95"), Decimal("99")),
    "AUD": (Decimal("9.95"), Decimal("110")),
    "EUR": (Decimal("5.90"), Decimal("60")),
    "GBP": (Decimal("4.95"), Decimal("50")),
    "JPY": (Decimal("550"), Decimal("8000")),
    "KRW": (Decimal("4000"), Decimal("70000")),
}

MAX_LINES = 50
MAX_QUANTITY = 99


@dataclass(frozen=True)
class PaymentLine:
    """One line item as Paylane wants it: a reference, a label and an amount."""

    reference: str
    label: str
    quantity: int
    amount: Decimal


def quote_cart(cart: Cart, promotion: Promotion | None = None) -> Quote:
    """Price ``cart`` with an (already validated) promotion."""
    currency = checkout_currency(cart.currency)
    _check_lines(cart.lines, currency)

    subtotals = [line.subtotal for line in cart.lines]
    subtotal = sum(subtotals, ZERO)
    discount = promotion.discount(subtotal, currency) if promotion else ZERO
    line_discounts = allocate_discount(discount, subtotals, currency)

    lines = tuple(
        PricedLine(
            sku=line.sku,
            name=line.name,
            quantity=line.quantity,
            unit_price=line.unit_price,
            subtotal=line_subtotal,
            discount=line_discount,
            total=line_subtotal - line_discount,
        )
        for line, line_subtotal, line_discount in zip(
            cart.lines, subtotals, line_discounts, strict=True
        )
    )
    shipping = shipping_for(subtotal - discount, currency, promotion)
    tax = compute_tax(subtotal - discount + shipping, cart.tax_rate, currency)
    total = subtotal - discount + shipping + tax
    log.debug(
        "quote cart=%s currency=%s subtotal=%s discount=%s shipping=%s tax=%s total=%s",
        cart.id, currency.code, subtotal, discount, shipping, tax, total,
    )
    return Quote(
        currency=currency.code,
        lines=lines,
        subtotal=subtotal,
        discount=discount,
        shipping=shipping,
        tax=tax,
        total=total,
        promo_code=promotion.code if promotion else None,
    )


def allocate_discount(
    discount: Decimal, subtotals: Sequence[Decimal], currency: Currency
) -> list[Decimal]:
    """Split an order-level discount across lines in proportion to their subtotals.

    Used for the gateway's line items and so that a partial refund gives back the
    discounted price of the refunded line (see orders.refunds).
    """
    base = sum(subtotals, ZERO)
    if not discount or not base:
        return [ZERO for _ in subtotals]
    shares = []
    for subtotal in subtotals:
        share = discount * subtotal / base
        shares.append(share.quantize(currency.quantum))
    return shares


def shipping_for(discounted: Decimal, currency: Currency, promotion: Promotion | None) -> Decimal:
    """Flat-rate shipping, free above the threshold or with a free-shipping promotion."""
    rate, free_above = SHIPPING[currency.code]
    if promotion is not None and promotion.kind == "free_shipping":
        return ZERO
    if discounted >= free_above:
        return ZERO
    return rate


def compute_tax(taxable: Decimal, rate: Decimal, currency: Currency) -> Decimal:
    """Sales tax on ``taxable``, rounded once (US storefront only; elsewhere rate is 0)."""
    if not rate:
        return ZERO
    if not ZERO < rate < 1:
        raise OrderError("ORD-4100", f"tax rate {rate} out of range")
    return quantize(taxable * rate, currency)


def payment_lines(quote: Quote) -> list[PaymentLine]:
    """The line items sent to Paylane; they must add up to ``quote.total`` exactly."""
    items = [
        PaymentLine(reference=line.sku, label=line.name, quantity=line.quantity, amount=line.total)
        for line in quote.lines
    ]
    if quote.shipping:
        items.append(PaymentLine("shipping", "Shipping", 1, quote.shipping))
    if quote.tax:
        items.append(PaymentLine("tax", "Sales tax", 1, quote.tax))
    return items


def explain_quote(quote: Quote) -> list[str]:
    """A line-by-line breakdown for the support console (``orders-admin explain ORDER``)."""
    currency = get_currency(quote.currency)
    width = max((len(line.sku) for line in quote.lines), default=3)
    out = [f"{currency.code} ({currency.name}, exponent {currency.exponent})"]
    for line in quote.lines:
        out.append(
            f"  {line.sku:<{width}}  {line.quantity:>2} x {line.unit_price:>9}"
            f"  = {line.subtotal:>10}  - {line.discount:>9}  = {line.total:>10}"
        )
    promo = quote.promo_code or "-"
    out.append(f"  subtotal {quote.subtotal}  discount {quote.discount} ({promo})")
    out.append(f"  shipping {quote.shipping}  tax {quote.tax}  total {quote.total}")
    drift = quote.line_sum - quote.total
    if drift:
        out.append(f"  !! line items sum to {quote.line_sum}, off by {drift:+} {currency.code}")
    return out


def _check_lines(lines: Sequence[LineItem], currency: Currency) -> None:
    if not lines:
        raise OrderError("ORD-4101")
    if len(lines) > MAX_LINES:
        raise OrderError("ORD-4100", f"at most {MAX_LINES} lines per order, got {len(lines)}")
    seen: set[str] = set()
    for line in lines:
        if line.sku in seen:
            raise OrderError("ORD-4100", f"duplicate line for {line.sku}")
        seen.add(line.sku)
        if line.quantity > MAX_QUANTITY:
            raise OrderError("ORD-4100", f"{line.sku}: at most {MAX_QUANTITY} per order")
        if not is_whole(line.unit_price, currency):
            raise OrderError(
                "ORD-4100", f"{line.sku}: price {line.unit_price} has more than "
                f"{currency.exponent} decimals for {currency.code}"
            )
'''[1:]

FILES["orders/promotions.py"] = r'''
"""Promotion codes: lookup, validation and the order-level discount they give.

A promotion gives one discount for the whole order. How that discount is spread over the
lines (for the gateway's line items and for partial refunds) is pricing's business, see
``orders.pricing.allocate_discount``.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from orders.currency import Currency, quantize
from orders.errors import PromotionError
from orders.models import ZERO, Cart

Kind = Literal["percent", "fixed", "free_shipping"]


@dataclass(frozen=True)
class Promotion:
    code: str
    kind: Kind
    value: Decimal = ZERO  # percent for "percent", an amount for "fixed"
    currencies: frozenset[str] | None = None  # None: every currency
    min_subtotal: dict[str, Decimal] | None = None
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    max_uses: int | None = None
    once_per_customer: bool = False

    def __post_init__(self) -> None:
        if self.kind == "percent" and not ZERO < self.value <= 100:
            raise ValueError(f"{self.code}: percent must be in (0, 100], got {self.value}")
        if self.kind == "fixed" and self.currencies is None:
            raise ValueError(f"{self.code}: a fixed-amount promotion needs its currencies")

    def discount(self, subtotal: Decimal, currency: Currency) -> Decimal:
        """The order-level discount for a cart subtotal, rounded once, never above it."""
        if self.kind == "percent":
            return min(quantize(subtotal * self.value / 100, currency), subtotal)
        if self.kind == "fixed":
            return min(quantize(self.value, currency), subtotal)
        return ZERO  # free shipping is applied by pricing.shipping_for


def percent_off(code: str, percent: int | str) -> Promotion:
    return Promotion(code=code, kind="percent", value=Decimal(percent))


def amount_off(code: str, amount: str, currency: str) -> Promotion:
    return Promotion(
        code=code, kind="fixed", value=Decimal(amount), currencies=frozenset({currency})
    )


class PromotionStore:
    """Promotions loaded from ``promotions.json``; usage counted in memory per process.

    The counts are only a first line of defence: the ledger job reconciles real usage
    nightly and disables codes that went over their limit.
    """

    def __init__(self, promotions: dict[str, Promotion] | None = None) -> None:
        self._promotions = dict(promotions or {})
        self._uses: Counter[str] = Counter()
        self._customers: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path) -> PromotionStore:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls({item["code"].upper(): _parse(item) for item in raw["promotions"]})

    def add(self, promotion: Promotion) -> None:
        self._promotions[promotion.code.upper()] = promotion

    def get(self, code: str) -> Promotion:
        try:
            return self._promotions[code.strip().upper()]
        except KeyError:
            raise PromotionError("PRM-2001", f"no promotion {code!r}") from None

    def validate(self, code: str, cart: Cart, subtotal: Decimal, now: datetime) -> Promotion:
        """The promotion for ``code`` if it applies to ``cart`` at ``now``; PRM-20xx if not."""
        promotion = self.get(code)
        if promotion.starts_at and now < promotion.starts_at:
            raise PromotionError("PRM-2001", f"{promotion.code} is not active yet")
        if promotion.ends_at and now >= promotion.ends_at:
            raise PromotionError("PRM-2002", f"{promotion.code} ended {promotion.ends_at:%Y-%m-%d}")
        if promotion.currencies is not None and cart.currency not in promotion.currencies:
            raise PromotionError("PRM-2003", f"{promotion.code} is not valid in {cart.currency}")
        minimum = (promotion.min_subtotal or {}).get(cart.currency)
        if minimum is not None and subtotal < minimum:
            raise PromotionError(
                "PRM-2004", f"{promotion.code} needs a subtotal of {minimum} {cart.currency}"
            )
        with self._lock:
            if promotion.max_uses is not None and self._uses[promotion.code] >= promotion.max_uses:
                raise PromotionError("PRM-2005", f"{promotion.code} has been used up")
            seen = self._customers.get(promotion.code, set())
            if promotion.once_per_customer and cart.customer_id in seen:
                raise PromotionError("PRM-2005", f"{promotion.code} was already used by you")
        return promotion

    def record_use(self, promotion: Promotion, customer_id: str | None) -> None:
        with self._lock:
            self._uses[promotion.code] += 1
            if customer_id:
                self._customers.setdefault(promotion.code, set()).add(customer_id)


def _parse(item: dict[str, Any]) -> Promotion:
    currencies = item.get("currencies")
    minimums = item.get("min_subtotal")
    return Promotion(
        code=item["code"].upper(),
        kind=item["kind"],
        value=Decimal(str(item.get("value", "0"))),
        currencies=frozenset(currencies) if currencies else None,
        min_subtotal={k: Decimal(str(v)) for k, v in minimums.items()} if minimums else None,
        starts_at=_when(item.get("starts_at")),
        ends_at=_when(item.get("ends_at")),
        max_uses=item.get("max_uses"),
        once_per_customer=bool(item.get("once_per_customer", False)),
    )


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
'''[1:]

FILES["orders/receipts.py"] = r'''
"""Plain-text receipts (the body of the confirmation e-mail and the printable receipt).

Strings live in ``locales/<locale>.json``; amounts are formatted with
``orders.currency.format_money`` so that yen show no decimals and euros use a decimal
comma. Columns are aligned by display width, so CJK product names line up too.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from pathlib import Path

from orders.currency import format_money, get_currency
from orders.models import Order

LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"
DEFAULT_LOCALE = "en"
WIDTH = 44


@functools.cache
def load_strings(locale: str) -> dict[str, str]:
    """The receipt strings for ``locale``, falling back to English for missing keys."""
    strings: dict[str, str] = json.loads(
        (LOCALES_DIR / f"{DEFAULT_LOCALE}.json").read_text(encoding="utf-8")
    )
    path = LOCALES_DIR / f"{locale}.json"
    if locale != DEFAULT_LOCALE and path.exists():
        strings.update(json.loads(path.read_text(encoding="utf-8")))
    return strings


def render_receipt(order: Order, *, locale: str | None = None) -> str:
    locale = locale or order.locale or DEFAULT_LOCALE
    strings = load_strings(locale)
    quote = order.quote
    currency = get_currency(quote.currency)

    def money(amount: object) -> str:
        return format_money(amount, currency, locale=locale)  # type: ignore[arg-type]

    rows: list[tuple[str, str]] = []
    for line in quote.lines:
        label = strings["receipt.line"].format(name=line.name, quantity=line.quantity)
        rows.append((label, money(line.subtotal)))
    rows.append(("", ""))
    rows.append((strings["receipt.subtotal"], money(quote.subtotal)))
    if quote.discount:
        label = strings["receipt.discount"].format(code=quote.promo_code or "")
        rows.append((label, f"-{quote.discount:,.2f}"))
    shipping = money(quote.shipping) if quote.shipping else strings["receipt.shipping_free"]
    rows.append((strings["receipt.shipping"], shipping))
    if quote.tax:
        rows.append((strings["receipt.tax"], money(quote.tax)))
    rows.append((strings["receipt.total"], money(quote.total)))

    out = [strings["receipt.title"].format(order_id=order.id), "=" * WIDTH]
    for label, amount in rows:
        if not label and not amount:
            out.append("-" * WIDTH)
            continue
        gap = max(WIDTH - display_width(label) - display_width(amount), 1)
        out.append(label + " " * gap + amount)
    out.append("=" * WIDTH)
    if locale == "ja" and not quote.tax:
        out.append(strings["receipt.tax_included"])
    out.append(strings["receipt.thanks"])
    out.append(strings["receipt.footer"])
    return "\n".join(out) + "\n"


def display_width(text: str) -> int:
    """Terminal/monospace width: East Asian wide and fullwidth characters count double."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)
'''[1:]

FILES["orders/refunds.py"] = r'''
"""Refunds: whole orders, or single lines at the price the customer actually paid.

A line's refund is its ``total`` -- subtotal minus its share of the order discount -- so
returning the matcha from a SPRING15 order gives back 85% of the matcha, not 100%.
Shipping is only refunded with the last line (or a full refund).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

from orders.currency import get_currency, to_minor
from orders.errors import OrderError
from orders.models import ZERO, Order, OrderStatus
from orders.payments.gateway import Gateway
from orders.storage import OrderStore

log = logging.getLogger(__name__)

REFUNDABLE = (OrderStatus.CAPTURED, OrderStatus.PARTIALLY_REFUNDED)


def refund_amount_for_lines(order: Order, skus: Iterable[str]) -> Decimal:
    """What refunding ``skus`` gives back, including shipping if nothing else is left."""
    wanted = set(skus)
    by_sku = {line.sku: line for line in order.quote.lines}
    unknown = wanted - by_sku.keys()
    if unknown:
        raise OrderError("ORD-4201", f"order {order.id} has no line {sorted(unknown)[0]}")
    amount = sum((by_sku[sku].total for sku in wanted), ZERO)
    remaining = order.refundable - amount
    if remaining == order.quote.shipping + order.quote.tax:
        amount = order.refundable  # the last lines: give back shipping and tax too
    return amount


def refund(
    order: Order,
    *,
    gateway: Gateway,
    store: OrderStore,
    now: datetime,
    skus: Iterable[str] | None = None,
    reason: str = "requested_by_customer",
) -> str:
    """Refund a captured order (or some of its lines); returns the gateway refund id."""
    if order.status not in REFUNDABLE or order.payment_ref is None:
        raise OrderError("ORD-4202", f"order {order.id} is {order.status.value}")
    amount = order.refundable if skus is None else refund_amount_for_lines(order, skus)
    if amount <= 0 or amount > order.refundable:
        raise OrderError(
            "ORD-4203", f"cannot refund {amount} of {order.refundable} {order.currency}"
        )
    currency = get_currency(order.currency)
    refund_id = gateway.refund(order.payment_ref, to_minor(amount, currency), reason)
    order.refunded += amount
    order.status = (
        OrderStatus.REFUNDED if order.refunded == order.quote.total
        else OrderStatus.PARTIALLY_REFUNDED
    )
    order.record(now, f"refunded {amount} ({refund_id})")
    store.save(order)
    log.info("refund order=%s amount=%s %s id=%s", order.id, amount, order.currency, refund_id)
    return refund_id
'''[1:]

FILES["orders/storage.py"] = r'''
"""Order storage: an in-memory store for tests and a SQLite store for single-node deploys.

Production runs the SQLite store on a persistent volume; the ledger export job reads the
same file read-only. Quotes are stored as JSON with amounts as strings so no float ever
touches money.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from orders.models import Order, OrderStatus, PricedLine, Quote

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (
    id              TEXT PRIMARY KEY,
    cart_id         TEXT NOT NULL,
    customer_id     TEXT,
    currency        TEXT NOT NULL,
    total           TEXT NOT NULL,
    status          TEXT NOT NULL,
    failure_code    TEXT,
    payment_ref     TEXT,
    refunded        TEXT NOT NULL DEFAULT '0',
    locale          TEXT NOT NULL DEFAULT 'en',
    quote_json      TEXT NOT NULL,
    idempotency_key TEXT UNIQUE,
    created_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_customer ON orders (customer_id, created_at);
CREATE INDEX IF NOT EXISTS orders_failure ON orders (failure_code, created_at);
"""


class OrderStore(Protocol):
    def save(self, order: Order, *, idempotency_key: str | None = None) -> None: ...

    def get(self, order_id: str) -> Order | None: ...

    def by_idempotency_key(self, key: str) -> Order | None: ...


class InMemoryOrderStore:
    def __init__(self) -> None:
        self._orders: dict[str, Order] = {}
        self._keys: dict[str, str] = {}

    def save(self, order: Order, *, idempotency_key: str | None = None) -> None:
        self._orders[order.id] = order
        if idempotency_key:
            self._keys[idempotency_key] = order.id

    def get(self, order_id: str) -> Order | None:
        return self._orders.get(order_id)

    def by_idempotency_key(self, key: str) -> Order | None:
        order_id = self._keys.get(key)
        return self._orders.get(order_id) if order_id else None

    def __len__(self) -> int:
        return len(self._orders)


class SqliteOrderStore:
    def __init__(self, path: Path | str) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def save(self, order: Order, *, idempotency_key: str | None = None) -> None:
        row = (
            order.id,
            order.cart_id,
            order.customer_id,
            order.currency,
            str(order.quote.total),
            order.status.value,
            order.failure_code,
            order.payment_ref,
            str(order.refunded),
            order.locale,
            json.dumps(order.quote.to_dict(), ensure_ascii=False),
            idempotency_key,
            order.created_at.isoformat(),
        )
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", row
            )

    def get(self, order_id: str) -> Order | None:
        cursor = self._db.execute("SELECT * FROM orders WHERE id = ?", (order_id,))
        row = cursor.fetchone()
        return _order(row) if row else None

    def by_idempotency_key(self, key: str) -> Order | None:
        cursor = self._db.execute("SELECT * FROM orders WHERE idempotency_key = ?", (key,))
        row = cursor.fetchone()
        return _order(row) if row else None

    def failures(self, code: str, since: datetime) -> list[Order]:
        cursor = self._db.execute(
            "SELECT * FROM orders WHERE failure_code = ? AND created_at >= ? ORDER BY created_at",
            (code, since.isoformat()),
        )
        return [_order(row) for row in cursor.fetchall()]


def _order(row: tuple[Any, ...]) -> Order:
    (order_id, cart_id, customer_id, _currency, _total, status, failure_code, payment_ref,
     refunded, locale, quote_json, _key, created_at) = row
    return Order(
        id=str(order_id),
        cart_id=str(cart_id),
        customer_id=str(customer_id) if customer_id else None,
        quote=_quote(json.loads(str(quote_json))),
        status=OrderStatus(status),
        created_at=datetime.fromisoformat(str(created_at)),
        locale=str(locale),
        payment_ref=str(payment_ref) if payment_ref else None,
        failure_code=str(failure_code) if failure_code else None,
        refunded=Decimal(str(refunded)),
    )


def _quote(data: dict[str, Any]) -> Quote:
    lines = tuple(
        PricedLine(
            sku=line["sku"],
            name=line["name"],
            quantity=int(line["quantity"]),
            unit_price=Decimal(line["unit_price"]),
            subtotal=Decimal(line["subtotal"]),
            discount=Decimal(line["discount"]),
            total=Decimal(line["total"]),
        )
        for line in data["lines"]
    )
    return Quote(
        currency=str(data["currency"]),
        lines=lines,
        subtotal=Decimal(str(data["subtotal"])),
        discount=Decimal(str(data["discount"])),
        shipping=Decimal(str(data["shipping"])),
        tax=Decimal(str(data["tax"])),
        total=Decimal(str(data["total"])),
        promo_code=data.get("promo_code"),
    )
'''[1:]

FILES["pyproject.toml"] = r"""
[build-system]
requires = ["setuptools>=69", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "orders-svc"
version = "2.14.0"
description = "Carts, quotes, checkout and receipts for the Tealeaf storefront"
requires-python = ">=3.11"
dependencies = [
    "fastapi>=0.110",
    "uvicorn[standard]>=0.29",
]

[project.optional-dependencies]
dev = [
    "pytest>=8.2",
    "pytest-cov>=5.0",
    "ruff>=0.4",
    "mypy>=1.10",
    "httpx>=0.27",
]

[tool.setuptools.packages.find]
include = ["orders*"]

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["."]
addopts = "-ra --strict-markers"
filterwarnings = ["error"]

[tool.ruff]
line-length = 100
target-version = "py311"

[tool.ruff.lint]
select = ["E", "F", "I", "B", "UP", "SIM", "RUF"]
ignore = ["RUF001"]

[tool.mypy]
python_version = "3.11"
strict = true
packages = ["orders"]
"""[1:]

FILES["tests/__init__.py"] = r"""
"""[1:]

FILES["tests/conftest.py"] = r"""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from orders.api.handlers import Deps
from orders.payments import FakeGateway
from orders.promotions import Promotion, PromotionStore, amount_off, percent_off
from orders.storage import InMemoryOrderStore
from tests.factories import NOW


@pytest.fixture
def promotions() -> PromotionStore:
    store = PromotionStore()
    store.add(percent_off("SPRING15", 15))
    store.add(percent_off("WELCOME10", 10))
    store.add(amount_off("SAVE5", "5.00", "USD"))
    store.add(amount_off("TEA500", "500", "JPY"))
    store.add(Promotion(code="FREESHIP", kind="free_shipping"))
    store.add(
        Promotion(
            code="WINTER20",
            kind="percent",
            value=Decimal(20),
            ends_at=datetime.fromisoformat("2024-03-01T00:00:00+00:00"),
        )
    )
    store.add(
        Promotion(
            code="BIGORDER",
            kind="percent",
            value=Decimal(12),
            min_subtotal={"USD": Decimal("150"), "JPY": Decimal("20000")},
        )
    )
    store.add(Promotion(code="LAUNCH", kind="percent", value=Decimal(30), max_uses=1))
    store.add(
        Promotion(code="FIRSTCUP", kind="percent", value=Decimal(10), once_per_customer=True)
    )
    return store


@pytest.fixture
def gateway() -> FakeGateway:
    return FakeGateway()


@pytest.fixture
def store() -> InMemoryOrderStore:
    return InMemoryOrderStore()


@pytest.fixture
def clock():
    return lambda: NOW


@pytest.fixture
def deps(promotions, gateway, store, clock) -> Deps:
    return Deps(promotions=promotions, gateway=gateway, store=store, clock=clock)
"""[1:]

FILES["tests/factories.py"] = r'''
"""Builders for carts and orders used across the test suite."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from orders.models import Cart, LineItem, Order, OrderStatus
from orders.pricing import quote_cart
from orders.promotions import Promotion

NOW = datetime(2024, 4, 18, 9, 30, tzinfo=UTC)

CATALOG = {
    "MATCHA-200G": ("Uji matcha 200g", "宇治抹茶 200g"),
    "CHASEN-80": ("Bamboo whisk, 80 tines", "茶筅 80本立"),
    "YUNOMI-BLU": ("Yunomi cup, indigo", "湯呑み（藍）"),
    "SENCHA-100G": ("Shizuoka sencha 100g", "静岡煎茶 100g"),
    "HOJICHA-100G": ("Hojicha 100g", "ほうじ茶 100g"),
    "KYUSU-350": ("Tokoname kyusu 350ml", "常滑焼 急須 350ml"),
    "GIFT-BOX": ("Gift box", "ギフトボックス"),
}


def make_cart(
    currency: str,
    lines: list[tuple[str, int, str]],
    *,
    promo: str | None = None,
    cart_id: str = "crt_test",
    customer_id: str | None = "cus_test",
    locale: str = "en",
    tax_rate: str = "0",
) -> Cart:
    """A cart from (sku, quantity, unit price) triples; names come from CATALOG."""
    japanese = locale == "ja"
    return Cart(
        id=cart_id,
        currency=currency,
        lines=[
            LineItem(sku, CATALOG[sku][1 if japanese else 0], quantity, Decimal(price))
            for sku, quantity, price in lines
        ],
        customer_id=customer_id,
        promo_code=promo,
        locale=locale,
        tax_rate=Decimal(tax_rate),
    )


def make_order(
    cart: Cart,
    promotion: Promotion | None = None,
    *,
    order_id: str = "ord_test0001",
    status: OrderStatus = OrderStatus.CAPTURED,
) -> Order:
    return Order(
        id=order_id,
        cart_id=cart.id,
        customer_id=cart.customer_id,
        quote=quote_cart(cart, promotion),
        status=status,
        created_at=NOW,
        locale=cart.locale,
        payment_ref="pl_test_000001" if status is not OrderStatus.PENDING else None,
    )
'''[1:]

FILES["tests/test_checkout.py"] = r"""
from __future__ import annotations

from decimal import Decimal

import pytest

from orders.checkout import checkout
from orders.errors import OrderError
from orders.models import OrderStatus
from tests.factories import make_cart


def run(cart, promotions, gateway, store, clock, **kwargs):
    return checkout(
        cart, promotions=promotions, gateway=gateway, store=store, clock=clock, **kwargs
    )


def test_checkout_authorizes_and_stores_order(promotions, gateway, store, clock):
    cart = make_cart("USD", [("SENCHA-100G", 2, "18.50"), ("CHASEN-80", 1, "24.00")])

    order = run(cart, promotions, gateway, store, clock)

    assert order.status is OrderStatus.AUTHORIZED
    assert order.payment_ref == "pl_test_000001"
    assert store.get(order.id) is order
    assert gateway.requests[0].amount_minor == 6795


def test_checkout_sends_line_items_that_add_up(promotions, gateway, store, clock):
    cart = make_cart(
        "USD", [("MATCHA-200G", 1, "42.00"), ("CHASEN-80", 1, "24.00")], promo="SPRING15"
    )

    run(cart, promotions, gateway, store, clock)

    request = gateway.requests[0]
    assert request.lines == [
        ("MATCHA-200G", "Uji matcha 200g", 1, 3570),
        ("CHASEN-80", "Bamboo whisk, 80 tines", 1, 2040),
        ("shipping", "Shipping", 1, 695),
    ]
    assert request.amount_minor == 6305


def test_checkout_records_promotion_use(promotions, gateway, store, clock):
    cart = make_cart("USD", [("SENCHA-100G", 1, "18.50")], promo="LAUNCH")

    run(cart, promotions, gateway, store, clock)

    with pytest.raises(Exception, match="PRM-2005"):
        run(cart, promotions, gateway, store, clock, order_id="ord_second")


def test_declined_payment_stores_failed_order(promotions, store, clock, gateway):
    gateway.decline_reason = "insufficient_funds"
    cart = make_cart("JPY", [("MATCHA-200G", 1, "3480")])

    with pytest.raises(OrderError) as raised:
        run(cart, promotions, gateway, store, clock, order_id="ord_declined")

    assert raised.value.code == "ORD-4104"
    failed = store.get("ord_declined")
    assert failed.status is OrderStatus.FAILED
    assert failed.failure_code == "ORD-4104"


def test_gateway_timeout_is_ord_4105(promotions, store, clock, gateway):
    gateway.timeout = True
    cart = make_cart("EUR", [("HOJICHA-100G", 2, "9.80")])

    with pytest.raises(OrderError) as raised:
        run(cart, promotions, gateway, store, clock)

    assert raised.value.code == "ORD-4105"
    assert raised.value.status == 504


def test_idempotent_replay_returns_same_order(promotions, gateway, store, clock):
    cart = make_cart("GBP", [("KYUSU-350", 1, "64.00")])

    first = run(cart, promotions, gateway, store, clock, idempotency_key="idem-1")
    second = run(cart, promotions, gateway, store, clock, idempotency_key="idem-1")

    assert second is first
    assert len(gateway.requests) == 1
    assert first.quote.total == Decimal("64.00")


def test_idempotency_key_reused_for_other_cart(promotions, gateway, store, clock):
    run(make_cart("GBP", [("KYUSU-350", 1, "64.00")]), promotions, gateway, store, clock,
        idempotency_key="idem-2")
    other = make_cart("GBP", [("GIFT-BOX", 1, "3.00")], cart_id="crt_other")

    with pytest.raises(OrderError, match="ORD-4106"):
        run(other, promotions, gateway, store, clock, idempotency_key="idem-2")
"""[1:]

FILES["tests/test_currency.py"] = r"""
from __future__ import annotations

from decimal import Decimal

import pytest

from orders.currency import (
    checkout_currency,
    format_money,
    from_minor,
    get_currency,
    quantize,
    to_minor,
)
from orders.errors import OrderError


def test_quantum_per_exponent():
    assert get_currency("USD").quantum == Decimal("0.01")
    assert get_currency("JPY").quantum == Decimal("1")
    assert get_currency("KWD").quantum == Decimal("0.001")


def test_get_currency_is_case_insensitive():
    assert get_currency("jpy") is get_currency("JPY")


def test_unknown_currency_is_ord_4103():
    with pytest.raises(OrderError) as raised:
        get_currency("XTS")
    assert raised.value.code == "ORD-4103"


def test_checkout_currency_rejects_unsold():
    assert checkout_currency("KRW").code == "KRW"
    with pytest.raises(OrderError, match="ISK is not sold"):
        checkout_currency("ISK")


def test_quantize_rounds_half_up():
    usd, jpy = get_currency("USD"), get_currency("JPY")
    assert quantize(Decimal("2.675"), usd) == Decimal("2.68")
    assert quantize(Decimal("2.665"), usd) == Decimal("2.67")
    assert quantize(Decimal("412.5"), jpy) == Decimal("413")
    assert quantize(Decimal("-412.5"), jpy) == Decimal("-413")


def test_to_minor_and_back():
    usd, jpy, kwd = get_currency("USD"), get_currency("JPY"), get_currency("KWD")
    assert to_minor(Decimal("12.50"), usd) == 1250
    assert to_minor(Decimal("11543"), jpy) == 11543
    assert to_minor(Decimal("1.005"), kwd) == 1005
    assert from_minor(1250, usd) == Decimal("12.50")
    assert from_minor(11543, jpy) == Decimal("11543")


def test_to_minor_rejects_fractional_units():
    with pytest.raises(ValueError, match="not a whole number of minor units"):
        to_minor(Decimal("412.5"), get_currency("JPY"))


def test_format_money_locales():
    assert format_money(Decimal("1234.5"), "USD") == "$1,234.50"
    assert format_money(Decimal("-6.3"), "USD") == "-$6.30"
    assert format_money(Decimal("11543"), "JPY") == "¥11,543"
    assert format_money(Decimal("11543"), "JPY", locale="ja") == "11,543円"
    assert format_money(Decimal("1234.5"), "EUR", locale="de") == "1.234,50 €"
    assert format_money(Decimal("70000"), "KRW", locale="ko") == "70,000원"
"""[1:]

FILES["tests/test_handlers.py"] = r"""
from __future__ import annotations

from orders.api.handlers import handle_checkout, handle_get_order, handle_quote

CART = {
    "cart_id": "crt_api",
    "currency": "usd",
    "customer_id": "cus_api",
    "lines": [
        {"sku": "SENCHA-100G", "name": "Shizuoka sencha 100g", "quantity": 2,
         "unit_price": "18.50"},
        {"sku": "CHASEN-80", "name": "Bamboo whisk, 80 tines", "quantity": 1,
         "unit_price": "24.00"},
    ],
}


def test_quote_endpoint_returns_breakdown(deps):
    status, body = handle_quote({**CART, "promo_code": "WELCOME10"}, deps)

    assert status == 200
    assert body["discount"] == "6.10"
    assert body["total"] == "61.85"
    assert [line["discount"] for line in body["lines"]] == ["3.70", "2.40"]


def test_checkout_endpoint_creates_order(deps):
    status, body = handle_checkout(CART, deps, idempotency_key="idem-api")

    assert status == 201
    assert body["status"] == "authorized"
    found_status, found = handle_get_order(body["order_id"], deps)
    assert found_status == 200
    assert found["quote"]["total"] == "67.95"


def test_malformed_cart_is_ord_4100(deps):
    status, body = handle_checkout({"cart_id": "crt_bad"}, deps, idempotency_key=None)

    assert status == 400
    assert body["code"] == "ORD-4100"


def test_error_message_is_localised(deps):
    payload = {**CART, "currency": "JPY", "promo_code": "SAVE5", "locale": "ja"}
    payload["lines"] = [{"sku": "SENCHA-100G", "quantity": 1, "unit_price": "1480"}]

    status, body = handle_quote(payload, deps)

    assert status == 400
    assert body["code"] == "PRM-2003"
    assert body["message"] == "このクーポンコードはお住まいの地域ではご利用いただけません。"
"""[1:]

FILES["tests/test_pricing.py"] = r"""
from __future__ import annotations

from decimal import Decimal

import pytest

from orders.currency import get_currency
from orders.errors import OrderError
from orders.pricing import allocate_discount, payment_lines, quote_cart
from orders.promotions import Promotion, amount_off, percent_off
from tests.factories import make_cart

USD = get_currency("USD")
JPY = get_currency("JPY")


def test_quote_without_promotion():
    cart = make_cart("USD", [("SENCHA-100G", 2, "18.50"), ("CHASEN-80", 1, "24.00")])

    quote = quote_cart(cart)

    assert quote.subtotal == Decimal("61.00")
    assert quote.discount == 0
    assert quote.shipping == Decimal("6.95")
    assert quote.total == Decimal("67.95")
    assert [line.total for line in quote.lines] == [Decimal("37.00"), Decimal("24.00")]


def test_percent_promotion_usd():
    cart = make_cart("USD", [("MATCHA-200G", 1, "42.00"), ("CHASEN-80", 1, "24.00")])

    quote = quote_cart(cart, percent_off("SPRING15", 15))

    assert quote.discount == Decimal("9.90")
    assert [line.discount for line in quote.lines] == [Decimal("6.30"), Decimal("3.60")]
    assert quote.shipping == Decimal("6.95")  # 56.10 after the discount: below $75
    assert quote.total == Decimal("63.05")


def test_fixed_promotion_never_exceeds_subtotal():
    cart = make_cart("USD", [("GIFT-BOX", 1, "3.50")])

    quote = quote_cart(cart, amount_off("SAVE5", "5.00", "USD"))

    assert quote.discount == Decimal("3.50")
    assert quote.lines[0].total == 0
    assert quote.total == quote.shipping


def test_free_shipping_threshold_uses_discounted_subtotal():
    cart = make_cart("USD", [("KYUSU-350", 1, "80.00")])

    without = quote_cart(cart)
    with_promo = quote_cart(cart, percent_off("WELCOME10", 10))

    assert without.shipping == 0  # $80 is above the $75 threshold
    assert with_promo.shipping == Decimal("6.95")  # $72 after the discount is not


def test_free_shipping_promotion():
    cart = make_cart("JPY", [("HOJICHA-100G", 1, "1080")])

    quote = quote_cart(cart, Promotion(code="FREESHIP", kind="free_shipping"))

    assert quote.discount == 0
    assert quote.shipping == 0
    assert quote.total == Decimal("1080")


def test_us_sales_tax_on_discounted_subtotal_and_shipping():
    cart = make_cart("USD", [("SENCHA-100G", 3, "18.50")], tax_rate="0.0725")

    quote = quote_cart(cart, percent_off("WELCOME10", 10))

    assert quote.discount == Decimal("5.55")
    assert quote.shipping == Decimal("6.95")
    assert quote.tax == Decimal("4.13")  # 7.25% of 56.90, rounded half-up
    assert quote.total == Decimal("61.03")
    assert quote.line_sum == quote.total


def test_allocate_discount_proportional():
    shares = allocate_discount(
        Decimal("10.00"), [Decimal("20.00"), Decimal("30.00"), Decimal("50.00")], USD
    )

    assert shares == [Decimal("2.00"), Decimal("3.00"), Decimal("5.00")]


def test_allocate_discount_zero():
    assert allocate_discount(Decimal(0), [Decimal("12.00"), Decimal("3.00")], USD) == [0, 0]
    assert allocate_discount(Decimal("5"), [], JPY) == []


def test_payment_lines_include_shipping_and_tax():
    cart = make_cart("USD", [("SENCHA-100G", 1, "18.50")], tax_rate="0.06")

    quote = quote_cart(cart)
    items = payment_lines(quote)

    assert [item.reference for item in items] == ["SENCHA-100G", "shipping", "tax"]
    assert sum(item.amount for item in items) == quote.total


def test_rejects_fractional_yen_price():
    cart = make_cart("JPY", [("MATCHA-200G", 1, "3480.5")])

    with pytest.raises(OrderError) as raised:
        quote_cart(cart)

    assert raised.value.code == "ORD-4100"
    assert "more than 0 decimals for JPY" in raised.value.detail


def test_rejects_empty_and_duplicate_lines():
    with pytest.raises(OrderError, match="ORD-4101"):
        quote_cart(make_cart("USD", []))
    with pytest.raises(OrderError, match="duplicate line for GIFT-BOX"):
        quote_cart(make_cart("USD", [("GIFT-BOX", 1, "3.50"), ("GIFT-BOX", 2, "3.50")]))
"""[1:]

FILES["tests/test_promotions.py"] = r"""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

from orders.errors import PromotionError
from orders.promotions import PromotionStore
from tests.factories import NOW, make_cart


def validate(promotions, code, cart):
    subtotal = sum(line.subtotal for line in cart.lines)
    return promotions.validate(code, cart, subtotal, NOW)


def test_lookup_is_case_insensitive(promotions):
    cart = make_cart("USD", [("SENCHA-100G", 1, "18.50")])
    assert validate(promotions, " spring15 ", cart).code == "SPRING15"


def test_unknown_code_is_prm_2001(promotions):
    cart = make_cart("USD", [("SENCHA-100G", 1, "18.50")])
    with pytest.raises(PromotionError) as raised:
        validate(promotions, "NOPE", cart)
    assert raised.value.code == "PRM-2001"


def test_expired_is_prm_2002(promotions):
    cart = make_cart("USD", [("SENCHA-100G", 1, "18.50")])
    with pytest.raises(PromotionError, match="WINTER20 ended 2024-03-01"):
        validate(promotions, "WINTER20", cart)


def test_currency_restriction_prm_2003(promotions):
    cart = make_cart("JPY", [("SENCHA-100G", 1, "1480")])
    with pytest.raises(PromotionError) as raised:
        validate(promotions, "SAVE5", cart)
    assert raised.value.code == "PRM-2003"


def test_minimum_subtotal_prm_2004(promotions):
    small = make_cart("JPY", [("MATCHA-200G", 2, "3480")])
    large = make_cart("JPY", [("MATCHA-200G", 6, "3480")])
    with pytest.raises(PromotionError, match="needs a subtotal of 20000 JPY"):
        validate(promotions, "BIGORDER", small)
    assert validate(promotions, "BIGORDER", large).value == Decimal(12)


def test_usage_limit_prm_2005(promotions):
    cart = make_cart("USD", [("SENCHA-100G", 1, "18.50")])
    promotion = validate(promotions, "LAUNCH", cart)
    promotions.record_use(promotion, "cus_a")
    with pytest.raises(PromotionError, match="used up"):
        validate(promotions, "LAUNCH", cart)


def test_once_per_customer(promotions):
    cart = make_cart("USD", [("SENCHA-100G", 1, "18.50")], customer_id="cus_a")
    other = make_cart("USD", [("SENCHA-100G", 1, "18.50")], customer_id="cus_b")
    promotions.record_use(validate(promotions, "FIRSTCUP", cart), "cus_a")
    with pytest.raises(PromotionError, match="already used by you"):
        validate(promotions, "FIRSTCUP", cart)
    assert validate(promotions, "FIRSTCUP", other).code == "FIRSTCUP"


def test_from_file(tmp_path):
    path = tmp_path / "promotions.json"
    path.write_text(
        json.dumps(
            {
                "promotions": [
                    {"code": "spring15", "kind": "percent", "value": 15,
                     "starts_at": "2024-04-01T00:00:00+09:00",
                     "ends_at": "2024-05-01T00:00:00+09:00"},
                    {"code": "TEA500", "kind": "fixed", "value": "500", "currencies": ["JPY"],
                     "min_subtotal": {"JPY": 3000}},
                ]
            }
        )
    )
    store = PromotionStore.from_file(path)
    spring = store.get("SPRING15")
    assert spring.value == Decimal(15) and spring.ends_at is not None
    assert store.get("tea500").min_subtotal == {"JPY": Decimal(3000)}
"""[1:]

FILES["tests/test_receipts.py"] = r"""
from __future__ import annotations

from orders.receipts import display_width, render_receipt
from tests.factories import make_cart, make_order


def test_receipt_en_usd():
    cart = make_cart("USD", [("SENCHA-100G", 2, "18.50"), ("CHASEN-80", 1, "24.00")])

    receipt = render_receipt(make_order(cart))

    assert receipt.splitlines()[:7] == [
        "Tealeaf order ord_test0001",
        "=" * 44,
        "Shizuoka sencha 100g x 2              $37.00",
        "Bamboo whisk, 80 tines x 1            $24.00",
        "-" * 44,
        "Subtotal                              $61.00",
        "Shipping                               $6.95",
    ]
    assert "Total                                 $67.95" in receipt


def test_receipt_ja_jpy_aligns_wide_characters():
    cart = make_cart(
        "JPY", [("MATCHA-200G", 2, "3480"), ("YUNOMI-BLU", 1, "1290")], locale="ja"
    )

    receipt = render_receipt(make_order(cart))
    lines = receipt.splitlines()

    assert lines[0] == "ご注文明細 ord_test0001"
    assert lines[2] == "宇治抹茶 200g × 2                    6,960円"
    assert lines[3] == "湯呑み（藍） × 1                     1,290円"
    assert all(display_width(line) == 44 for line in lines[2:4])
    assert "※表示価格はすべて税込です。" in lines


def test_receipt_de_uses_decimal_comma():
    cart = make_cart("EUR", [("HOJICHA-100G", 2, "9.80")], locale="de")

    receipt = render_receipt(make_order(cart))

    assert "Zwischensumme                        19,60 €" in receipt
    assert "Versand                               5,90 €" in receipt
    assert "Gesamt                               25,50 €" in receipt


def test_display_width_counts_cjk_double():
    assert display_width("Total") == 5
    assert display_width("合計") == 4
    assert display_width("湯呑み（藍）") == 12
    assert display_width("割引（SPRING15）") == 16
"""[1:]


# --------------------------------------------------------------------------------------
# The pod log the user dropped into logs/: one pod, 2024-04-18 00:00-16:00 UTC. Totals are
# computed the way orders-svc 2.14.0 computes them, so the ORD-4102 lines appear exactly
# for the carts whose per-line discounts do not add up.
# --------------------------------------------------------------------------------------

LOG_PATH = "logs/checkout-2024-04-18.log"
LOG_HOURS = 16

# sku: (English name, prices by currency as strings)
PRODUCTS: dict[str, dict[str, str]] = {
    "MATCHA-200G": {
        "JPY": "3480",
        "KRW": "38900",
        "USD": "42.00",
        "EUR": "38.00",
        "GBP": "33.00",
        "CAD": "56.00",
        "AUD": "62.00",
    },
    "CHASEN-80": {
        "JPY": "2750",
        "KRW": "26500",
        "USD": "24.00",
        "EUR": "22.00",
        "GBP": "19.00",
        "CAD": "32.00",
        "AUD": "36.00",
    },
    "YUNOMI-BLU": {
        "JPY": "1290",
        "KRW": "15900",
        "USD": "16.50",
        "EUR": "15.00",
        "GBP": "13.00",
        "CAD": "22.00",
        "AUD": "24.00",
    },
    "SENCHA-100G": {
        "JPY": "1480",
        "KRW": "16900",
        "USD": "18.50",
        "EUR": "16.90",
        "GBP": "14.50",
        "CAD": "24.50",
        "AUD": "27.00",
    },
    "HOJICHA-100G": {
        "JPY": "1080",
        "KRW": "11900",
        "USD": "12.99",
        "EUR": "9.80",
        "GBP": "8.90",
        "CAD": "16.99",
        "AUD": "18.50",
    },
    "KYUSU-350": {
        "JPY": "6600",
        "KRW": "77000",
        "USD": "80.00",
        "EUR": "72.00",
        "GBP": "64.00",
        "CAD": "105.00",
        "AUD": "118.00",
    },
    "GYOKURO-50G": {
        "JPY": "2160",
        "KRW": "24900",
        "USD": "29.00",
        "EUR": "26.50",
        "GBP": "23.00",
        "CAD": "38.00",
        "AUD": "43.00",
    },
    "GENMAI-200G": {
        "JPY": "980",
        "KRW": "10900",
        "USD": "11.75",
        "EUR": "10.50",
        "GBP": "9.25",
        "CAD": "15.50",
        "AUD": "17.00",
    },
    "CHAWAN-KURO": {
        "JPY": "4950",
        "KRW": "56000",
        "USD": "58.00",
        "EUR": "52.00",
        "GBP": "46.00",
        "CAD": "76.00",
        "AUD": "86.00",
    },
    "GIFT-BOX": {
        "JPY": "330",
        "KRW": "3500",
        "USD": "3.50",
        "EUR": "3.00",
        "GBP": "3.00",
        "CAD": "4.50",
        "AUD": "5.00",
    },
}
EXPONENT = {"JPY": 0, "KRW": 0, "USD": 2, "EUR": 2, "GBP": 2, "CAD": 2, "AUD": 2}
SHIPPING = {  # (flat rate, free above), as in orders/pricing.py
    "USD": ("6.95", "75"),
    "CAD": ("9.95", "99"),
    "AUD": ("9.95", "110"),
    "EUR": ("5.90", "60"),
    "GBP": ("4.95", "50"),
    "JPY": ("550", "8000"),
    "KRW": ("4000", "70000"),
}
# code: (kind, value, only currency, minimum subtotal)
PROMOS = {
    "SPRING15": ("percent", "15", None, None),
    "WELCOME10": ("percent", "10", None, None),
    "TEA500": ("fixed", "500", "JPY", "3000"),
    "SAVE5": ("fixed", "5.00", "USD", "40"),
    "FREESHIP": ("free_shipping", "0", None, None),
    "WINTER20": ("expired", "20", None, None),
}
US_TAX = ["0", "0.0625", "0.0725", "0.08875", "0.06", "0.1025"]

THE_ORDER = "ord_8f3a2c91"
THE_CART = [("MATCHA-200G", 2), ("CHASEN-80", 1), ("YUNOMI-BLU", 3)]


def v2_14_totals(
    currency: str, lines: list[tuple[str, int]], promo: str | None, tax_rate: str
) -> tuple[Decimal, Decimal]:
    """(sum of the gateway line items, order total) as orders-svc 2.14.0 computes them."""
    quantum = Decimal(1).scaleb(-EXPONENT[currency])
    subtotals = [Decimal(PRODUCTS[sku][currency]) * qty for sku, qty in lines]
    subtotal = sum(subtotals, Decimal(0))
    kind, value, _, _ = PROMOS[promo] if promo else ("none", "0", None, None)
    discount = Decimal(0)
    if kind == "percent":
        discount = min((subtotal * Decimal(value) / 100).quantize(quantum, ROUND_HALF_UP), subtotal)
    elif kind == "fixed":
        discount = min(Decimal(value), subtotal)
    shares = [
        (discount * s / subtotal).quantize(quantum, ROUND_HALF_EVEN) if discount else Decimal(0)
        for s in subtotals
    ]
    rate, free_above = (Decimal(x) for x in SHIPPING[currency])
    shipping = Decimal(0) if kind == "free_shipping" or subtotal - discount >= free_above else rate
    tax = Decimal(0)
    if Decimal(tax_rate):
        tax = ((subtotal - discount + shipping) * Decimal(tax_rate)).quantize(
            quantum, ROUND_HALF_UP
        )
    total = subtotal - discount + shipping + tax
    line_sum = sum((s - d for s, d in zip(subtotals, shares, strict=True)), Decimal(0))
    return line_sum + shipping + tax, total


@dataclass
class LogStats:
    checkouts: int = 0
    by_currency: dict[str, int] = field(default_factory=dict)
    mismatches: dict[str, int] = field(default_factory=dict)  # currency -> ORD-4102 count
    mismatch_promos: dict[str, int] = field(default_factory=dict)
    off_by: set[str] = field(default_factory=set)
    declines: int = 0
    timeouts: int = 0
    promo_rejections: int = 0
    lines: int = 0


def build_log(rng: random.Random) -> tuple[str, LogStats]:
    stats = LogStats()
    out: list[tuple[float, str]] = []

    def hexid(n: int) -> str:
        return "".join(rng.choice("0123456789abcdef") for _ in range(n))

    def alnum(n: int) -> str:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))

    def emit(t: float, level: str, logger: str, req: str, message: str) -> None:
        out.append((t, f"{stamp(t)} {level:<7} {logger} [req={req}] {message}"))

    def access(t: float, path: str, status: int) -> None:
        client = f"10.42.{rng.randint(1, 6)}.{rng.randint(2, 250)}:{rng.randint(32768, 60999)}"
        emit(t, "INFO", "uvicorn.access", "-", f'{client} - "POST {path} HTTP/1.1" {status}')

    def checkout(
        t: float,
        currency: str,
        lines: list[tuple[str, int]],
        promo: str | None,
        tax_rate: str,
        order_id: str | None = None,
    ) -> None:
        req, cart, order = hexid(8), "crt_" + alnum(10), order_id or "ord_" + hexid(8)
        access(t - rng.uniform(4, 40), "/v1/quotes", 200)
        stats.checkouts += 1
        stats.by_currency[currency] = stats.by_currency.get(currency, 0) + 1
        if promo:
            kind, _, only, minimum = PROMOS[promo]
            subtotal = sum(Decimal(PRODUCTS[s][currency]) * q for s, q in lines)
            reason = None
            if kind == "expired":
                reason = f"PRM-2002 promotion expired: {promo} ended 2024-03-01"
            elif only and only != currency:
                reason = (
                    f"PRM-2003 promotion not valid for this currency: {promo} is not "
                    f"valid in {currency}"
                )
            elif minimum and subtotal < Decimal(minimum):
                reason = (
                    f"PRM-2004 order below promotion minimum: {promo} needs a subtotal "
                    f"of {minimum} {currency}"
                )
            if reason:
                stats.promo_rejections += 1
                emit(
                    t,
                    "INFO",
                    "orders.checkout",
                    req,
                    f"promotion rejected cart={cart} code={promo}: {reason}",
                )
                access(t + 0.004, "/v1/checkouts", 400)
                return
        line_sum, total = v2_14_totals(currency, lines, promo, tax_rate)
        emit(
            t,
            "INFO",
            "orders.checkout",
            req,
            f"checkout started order={order} cart={cart} currency={currency} "
            f"lines={len(lines)} promo={promo or '-'} total={total}",
        )
        if line_sum != total:
            stats.mismatches[currency] = stats.mismatches.get(currency, 0) + 1
            stats.mismatch_promos[promo or "-"] = stats.mismatch_promos.get(promo or "-", 0) + 1
            stats.off_by.add(str(line_sum - total))
            emit(
                t + 0.001,
                "WARNING",
                "orders.checkout",
                req,
                f"ORD-4102 total mismatch order={order} currency={currency} "
                f"line_sum={line_sum} total={total} promo={promo or '-'}",
            )
            emit(
                t + 0.002,
                "ERROR",
                "orders.api.handlers",
                req,
                f"request failed: ORD-4102 total mismatch: line items sum to {line_sum}, "
                f"order total is {total}",
            )
            access(t + 0.003, "/v1/checkouts", 409)
            return
        took = rng.randint(180, 900)
        if rng.random() < 0.012:
            stats.timeouts += 1
            emit(
                t + 0.2,
                "INFO",
                "orders.payments.gateway",
                req,
                "paylane POST /v3/payments connection error (<urlopen error [Errno 104] "
                "Connection reset by peer>), retrying",
            )
            emit(
                t + 8.6,
                "ERROR",
                "orders.api.handlers",
                req,
                "request failed: ORD-4105 payment gateway timeout: POST /v3/payments timed "
                "out after 8.0s",
            )
            access(t + 8.601, "/v1/checkouts", 504)
            return
        if rng.random() < 0.035:
            stats.declines += 1
            code = rng.choice(["card_declined", "insufficient_funds", "do_not_honor"])
            emit(
                t + took / 1000,
                "WARNING",
                "orders.payments.gateway",
                req,
                f"paylane POST /v3/payments -> 402 {{'code': '{code}'}}",
            )
            access(t + took / 1000 + 0.002, "/v1/checkouts", 402)
            return
        emit(
            t + took / 1000,
            "INFO",
            "orders.payments.gateway",
            req,
            f"paylane POST /v3/payments -> ok in {took}ms",
        )
        emit(
            t + took / 1000 + 0.001,
            "INFO",
            "orders.checkout",
            req,
            f"authorized order={order} ref=pl_{alnum(14)} amount={total}",
        )
        access(t + took / 1000 + 0.003, "/v1/checkouts", 201)

    weights = {"JPY": 50, "KRW": 9, "USD": 22, "EUR": 10, "GBP": 5, "CAD": 2, "AUD": 2}
    promos = (
        ["SPRING15"] * 45
        + [None] * 33
        + ["WELCOME10"] * 8
        + ["TEA500"] * 5
        + ["SAVE5"] * 5
        + ["FREESHIP"] * 3
        + ["WINTER20"] * 1
    )
    t, placed = 45.0, False
    while t < LOG_HOURS * 3600:
        if not placed and t > 6120:  # 01:42 UTC (10:42 JST)
            checkout(6137.532, "JPY", THE_CART, "SPRING15", "0", order_id=THE_ORDER)
            placed = True
        currency = rng.choices(list(weights), weights=list(weights.values()))[0]
        skus = rng.sample(sorted(PRODUCTS), rng.choices([1, 2, 3, 4], weights=[22, 34, 30, 14])[0])
        lines = [(sku, rng.choices([1, 2, 3], weights=[62, 27, 11])[0]) for sku in skus]
        promo = rng.choice(promos)
        tax = rng.choice(US_TAX) if currency == "USD" else "0"
        checkout(t, currency, lines, promo, tax)
        t += rng.expovariate(1 / 520) + 30
    out.sort(key=lambda item: item[0])
    stats.lines = len(out)
    return "".join(line + "\n" for _, line in out), stats


def stamp(seconds: float) -> str:
    ms = round(seconds * 1000)
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2024-04-18 {h:02d}:{m:02d}:{s:02d},{ms:03d}"


# --------------------------------------------------------------------------------------
# The workspace: the repository in memory, and the tools the agent calls on it.
# --------------------------------------------------------------------------------------

UNTRACKED = {LOG_PATH}


def blob_id(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def numbered(lines: list[str], first: int) -> str:
    """Lines as ``cat -n`` prints them."""
    return "".join(f"{first + i:6}\t{line}\n" for i, line in enumerate(lines))


class Workspace:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = dict(files)
        self.head = {path: text for path, text in files.items() if path not in UNTRACKED}

    # -- tools ----------------------------------------------------------------------
    def ls(self, path: str = ".") -> str:
        prefix = "" if path in (".", "") else path.rstrip("/") + "/"
        if prefix and not any(name.startswith(prefix) for name in self.files):
            return f"ls: cannot access '{path}': No such file or directory"
        entries = set()
        for name in self.files:
            if name.startswith(prefix):
                head, sep, _ = name[len(prefix) :].partition("/")
                entries.add(head + "/" if sep else head)
        return "\n".join(sorted(entries, key=lambda e: (e.lower().lstrip("."), e))) + "\n"

    def read_file(self, path: str, start: int | None = None, end: int | None = None) -> str:
        if path not in self.files:
            return f"Error: {path} does not exist"
        lines = self.files[path].splitlines()
        first = start or 1
        last = min(end or len(lines), len(lines))
        return numbered(lines[first - 1 : last], first)

    def grep(self, pattern: str, path: str = ".", include: str | None = None) -> str:
        regex = re.compile(pattern)
        prefix = "" if path in (".", "") else path.rstrip("/")
        hits = []
        for name in sorted(self.files):
            if prefix and name != prefix and not name.startswith(prefix + "/"):
                continue
            if include and not fnmatch.fnmatch(name.rsplit("/", 1)[-1], include):
                continue
            for number, line in enumerate(self.files[name].splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{name}:{number}:{line}")
        if not hits:
            return "No matches found.\n"
        if len(hits) > 200:
            return "\n".join(hits[:200]) + f"\n... ({len(hits) - 200} more matches not shown)\n"
        return "\n".join(hits) + "\n"

    def str_replace(self, path: str, old: str, new: str) -> tuple[str, bool]:
        text = self.files.get(path)
        if text is None:
            return f"Error: the path {path} does not exist.", True
        count = text.count(old)
        if count == 0:
            return (
                f"No replacement was performed, old_str `{old}` did not appear verbatim in "
                f"{ROOT}/{path}.",
                True,
            )
        if count > 1:
            starts = [m.start() for m in re.finditer(re.escape(old), text)]
            numbers = [text.count("\n", 0, s) + 1 for s in starts]
            return (
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in "
                f"lines {numbers}. Please ensure it is unique",
                True,
            )
        at = text.index(old)
        self.files[path] = text.replace(old, new, 1)
        first = text.count("\n", 0, at) + 1
        last = first + new.count("\n")
        return self._snippet(path, first, last), False

    def insert(self, path: str, after_line: int, new: str) -> tuple[str, bool]:
        lines = self.files[path].splitlines(keepends=True)
        added = new if new.endswith("\n") else new + "\n"
        self.files[path] = "".join(lines[:after_line]) + added + "".join(lines[after_line:])
        return self._snippet(path, after_line + 1, after_line + added.count("\n")), False

    def _snippet(self, path: str, first: int, last: int) -> str:
        lines = self.files[path].splitlines()
        lo, hi = max(first - 4, 1), min(last + 4, len(lines))
        return (
            f"The file {ROOT}/{path} has been edited. Here's the result of running `cat -n` "
            f"on a snippet of {ROOT}/{path}:\n"
            + numbered(lines[lo - 1 : hi], lo)
            + "Review the changes and make sure they are as expected. Edit the file again if "
            "necessary."
        )

    # -- git ------------------------------------------------------------------------
    def changed(self) -> list[str]:
        return sorted(p for p, t in self.head.items() if self.files.get(p) != t)

    def git_diff(self, paths: list[str] | None = None) -> str:
        return "".join(
            unified(path, self.head[path], self.files[path]) for path in paths or self.changed()
        )

    def git_diff_stat(self) -> str:
        rows = []
        for path in self.changed():
            diff = unified(path, self.head[path], self.files[path]).splitlines()
            plus = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
            minus = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
            rows.append((path, plus, minus))
        return diffstat(rows)


def funcname(lines: list[str], before: int) -> str:
    """git's default hunk-header context: the last line starting with a letter, _ or $."""
    for line in reversed(lines[:before]):
        if re.match(r"[A-Za-z_$]", line):
            return " " + line.rstrip()[:80]
    return ""


def unified(path: str, old: str, new: str, context: int = 3) -> str:
    a, b = old.splitlines(), new.splitlines()
    out = [
        f"diff --git a/{path} b/{path}\n",
        f"index {blob_id(old)[:7]}..{blob_id(new)[:7]} 100644\n",
        f"--- a/{path}\n",
        f"+++ b/{path}\n",
    ]
    for group in grouped_opcodes(a, b, context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@{funcname(a, i1)}\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out.extend(f" {line}\n" for line in a[x1:x2])
                continue
            out.extend(f"-{line}\n" for line in a[x1:x2])
            out.extend(f"+{line}\n" for line in b[y1:y2])
    return "".join(out)


def grouped_opcodes(a: list[str], b: list[str], context: int) -> list[list[tuple]]:
    """Hunks like git's: difflib's matching, then git's sliding of changed blocks
    (xdiff's ``xdl_change_compact`` with the indent heuristic, git's default)."""
    ca, cb = [False] * (len(a) + 1), [False] * (len(b) + 1)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            ca[i1:i2] = [True] * (i2 - i1)
            cb[j1:j2] = [True] * (j2 - j1)
    _compact(a, ca, cb)
    _compact(b, cb, ca)
    codes, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        i0, j0 = i, j
        if i < len(a) and j < len(b) and not ca[i] and not cb[j]:
            while i < len(a) and j < len(b) and not ca[i] and not cb[j]:
                i, j = i + 1, j + 1
            codes.append(("equal", i0, i, j0, j))
            continue
        while i < len(a) and ca[i]:
            i += 1
        while j < len(b) and cb[j]:
            j += 1
        codes.append(("replace", i0, i, j0, j))

    class Matcher(difflib.SequenceMatcher):
        def get_opcodes(self) -> list[tuple]:  # type: ignore[override]
            return codes

    return list(Matcher(None, a, b).get_grouped_opcodes(context))


def _compact(recs: list[str], rchg: list[bool], other: list[bool]) -> None:
    """Slide each block of changed lines in ``recs`` as git does (see xdiffi.c)."""
    n, no = len(recs), len(other) - 1

    def changed(flags: list[bool], i: int) -> bool:
        return 0 <= i < len(flags) - 1 and flags[i]

    def slide_up(g: list[int]) -> bool:
        if g[0] > 0 and recs[g[0] - 1] == recs[g[1] - 1]:
            g[0] -= 1
            g[1] -= 1
            rchg[g[0]], rchg[g[1]] = True, False
            while changed(rchg, g[0] - 1):
                g[0] -= 1
            return True
        return False

    def slide_down(g: list[int]) -> bool:
        if g[1] < n and recs[g[0]] == recs[g[1]]:
            rchg[g[0]], rchg[g[1]] = False, True
            g[0] += 1
            g[1] += 1
            while changed(rchg, g[1]):
                g[1] += 1
            return True
        return False

    def next_group(flags: list[bool], g: list[int], size: int) -> bool:
        if g[1] == size:
            return False
        g[0] = g[1] + 1
        g[1] = g[0]
        while changed(flags, g[1]):
            g[1] += 1
        return True

    def previous_group(flags: list[bool], g: list[int]) -> bool:
        if g[0] == 0:
            return False
        g[1] = g[0] - 1
        g[0] = g[1]
        while changed(flags, g[0] - 1):
            g[0] -= 1
        return True

    g, go = [0, 0], [0, 0]
    while changed(rchg, g[1]):
        g[1] += 1
    while changed(other, go[1]):
        go[1] += 1
    while True:
        if g[1] != g[0]:
            while True:
                size = g[1] - g[0]
                end_matching_other = -1
                while slide_up(g):
                    previous_group(other, go)
                earliest_end = g[1]
                if go[1] > go[0]:
                    end_matching_other = g[1]
                while slide_down(g):
                    next_group(other, go, no)
                    if go[1] > go[0]:
                        end_matching_other = g[1]
                if size == g[1] - g[0]:
                    break
            if g[1] == earliest_end:
                pass
            elif end_matching_other != -1:
                while go[1] == go[0]:
                    slide_up(g)
                    previous_group(other, go)
            else:
                shift = max(earliest_end, g[1] - size - 1, g[1] - 100)
                best_shift, best = -1, (0, 0)
                while shift <= g[1]:
                    score = _split_score(recs, shift, (0, 0))
                    score = _split_score(recs, shift - size, score)
                    if best_shift == -1 or _score_cmp(score, best) <= 0:
                        best, best_shift = score, shift
                    shift += 1
                while g[1] > best_shift:
                    slide_up(g)
                    previous_group(other, go)
        if not next_group(rchg, g, n):
            break
        next_group(other, go, no)


def _indent(line: str) -> int:
    width = 0
    for ch in line:
        if not ch.isspace():
            return width
        width = width + 1 if ch == " " else width + 8 - width % 8 if ch == "\t" else width
        if width >= 200:
            return 200
    return -1


def _split_score(recs: list[str], split: int, score: tuple[int, int]) -> tuple[int, int]:
    effective, penalty = score
    end_of_file = split >= len(recs)
    indent = -1 if end_of_file else _indent(recs[split])
    pre_blank, pre_indent = 0, -1
    for i in range(split - 1, -1, -1):
        pre_indent = _indent(recs[i])
        if pre_indent != -1:
            break
        pre_blank += 1
        if pre_blank == 20:
            pre_indent = 0
            break
    post_blank, post_indent = 0, -1
    for i in range(split + 1, len(recs)):
        post_indent = _indent(recs[i])
        if post_indent != -1:
            break
        post_blank += 1
        if post_blank == 20:
            post_indent = 0
            break
    if pre_indent == -1 and pre_blank == 0:
        penalty += 1
    if end_of_file:
        penalty += 21
    post = 1 + post_blank if indent == -1 else 0
    total = pre_blank + post
    penalty += -30 * total + 6 * post
    level = indent if indent != -1 else post_indent
    effective += level
    if level == -1 or pre_indent == -1 or level == pre_indent:
        pass
    elif level > pre_indent:
        penalty += 10 if total else -4
    elif post_indent != -1 and post_indent > level:
        penalty += 17 if total else 24
    else:
        penalty += 17 if total else 23
    return effective, penalty


def _score_cmp(s1: tuple[int, int], s2: tuple[int, int]) -> int:
    return 60 * ((s1[0] > s2[0]) - (s1[0] < s2[0])) + (s1[1] - s2[1])


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def diffstat(rows: list[tuple[str, int, int]]) -> str:
    width = max(len(path) for path, _, _ in rows)
    digits = len(str(max(plus + minus for _, plus, minus in rows)))
    graph = 80 - width - digits - 6  # git's budget for the +/- bar on an 80-column terminal
    biggest = max(plus + minus for _, plus, minus in rows)
    out = []
    for path, plus, minus in rows:
        total = plus + minus
        if biggest > graph:  # scale like git: every non-zero side gets at least one mark
            p = _scale(plus, biggest, graph)
            m = _scale(minus, biggest, graph)
        else:
            p, m = plus, minus
        out.append(f" {path:<{width}} | {total:>{digits}} {'+' * p}{'-' * m}\n")
    files = len(rows)
    ins, dels = sum(r[1] for r in rows), sum(r[2] for r in rows)
    summary = f" {files} file{'s' if files != 1 else ''} changed"
    if ins:
        summary += f", {ins} insertion{'s' if ins != 1 else ''}(+)"
    if dels:
        summary += f", {dels} deletion{'s' if dels != 1 else ''}(-)"
    return "".join(out) + summary + "\n"


def _scale(value: int, biggest: int, width: int) -> int:
    if not value:
        return 0
    return 1 + (value * (width - 1)) // biggest


# --------------------------------------------------------------------------------------
# pytest, as it prints on an 80-column pipe, from the tests in the workspace right now.
# --------------------------------------------------------------------------------------

WIDTH = 80
PLATFORM = "platform linux -- Python 3.11.9, pytest-8.2.1, pluggy-1.5.0"
PLUGINS = "plugins: anyio-4.4.0, cov-5.0.0"


def sep(ch: str, title: str = "") -> str:
    if not title:
        return ch * WIDTH
    fill = ch * max((WIDTH - len(title) - 2) // 2, 1)
    line = f"{fill} {title} {fill}"
    return line + ch if len(line) + 1 <= WIDTH else line


@dataclass
class Failure:
    test: str  # node id
    at: str  # a unique piece of the failing line
    details: list[str]  # the "E" lines
    error: str = "AssertionError"


def collect(ws: Workspace, paths: list[str] | None) -> list[str]:
    files = paths or sorted(p for p in ws.files if re.fullmatch(r"tests/test_\w+\.py", p))
    return [
        f"{path}::{name}"
        for path in files
        for name in re.findall(r"^def (test_\w+)\(", ws.files[path], re.M)
    ]


def pytest_report(
    ws: Workspace,
    *,
    paths: list[str] | None = None,
    verbose: bool = False,
    failures: tuple[Failure, ...] = (),
    seconds: str = "0.84",
) -> tuple[str, int]:
    tests = collect(ws, paths)
    failed = {f.test: f for f in failures}
    assert set(failed) <= set(tests), set(failed) - set(tests)
    out = [sep("=", "test session starts")]
    out.append(PLATFORM + (f" -- {ROOT}/.venv/bin/python" if verbose else ""))
    if verbose:
        out.append("cachedir: .pytest_cache")
    out += [f"rootdir: {ROOT}", "configfile: pyproject.toml"]
    if not paths:
        out.append("testpaths: tests")
    out.append(PLUGINS)
    collected = f"collected {len(tests)} item{'s' if len(tests) != 1 else ''}"
    out += ["collecting ... " + collected if verbose else collected, ""]

    def progress(done: int, line: str) -> str:
        return line + f" [{done * 100 // len(tests):3d}%]".rjust(WIDTH - len(line) - 1)

    done = 0
    if verbose:
        for test in tests:
            done += 1
            out.append(progress(done, f"{test} {'FAILED' if test in failed else 'PASSED'}"))
    else:
        for path in dict.fromkeys(t.split("::")[0] for t in tests):
            marks = "".join("F" if t in failed else "." for t in tests if t.startswith(path + "::"))
            done += len(marks)
            out.append(progress(done, f"{path} {marks}"))
    out.append("")
    if failures:
        out.append(sep("=", "FAILURES"))
        for failure in failures:
            out += [sep("_", failure.test.split("::")[1]), "", *source_excerpt(ws, failure)]
        out.append(sep("=", "short test summary info"))
        for failure in failures:
            out.append(trimmed(f"FAILED {failure.test}", failure.details[0]))
    counts = []
    if failures:
        counts.append(f"{len(failures)} failed")
    if len(tests) > len(failures):
        counts.append(f"{len(tests) - len(failures)} passed")
    out.append(sep("=", f"{', '.join(counts)} in {seconds}s"))
    return "\n".join(out) + "\n", 1 if failures else 0


def source_excerpt(ws: Workspace, failure: Failure) -> list[str]:
    path, name = failure.test.split("::")
    lines = ws.files[path].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    stop = next(i for i in range(start, len(lines)) if failure.at in lines[i])
    body = [(">   " if i == stop else "    ") + lines[i] for i in range(start, stop + 1)]
    details = ["E       " + d if d else "E" for d in failure.details]
    return body + details + ["", f"{path}:{stop + 1}: {failure.error}"]


def trimmed(line: str, message: str) -> str:
    """pytest's short-summary line: `` - message`` cut with ... to fit the width."""
    available = WIDTH - len(line)
    if available < len(" - ") + 3:
        return line
    if len(" - ") + len(message) > available:
        message = message[: available - 3 - len(" - ")] + "..."
    return f"{line} - {message}"


# --------------------------------------------------------------------------------------
# git: the history before the session, and what `git show` prints for #412.
# --------------------------------------------------------------------------------------

GIT_LOG = """\
a41c9e2 (HEAD -> main, tag: v2.14.0, origin/main, origin/HEAD) release: v2.14.0
7d3f0b8 pricing: allocate promotion discounts per line (#412)
c2e8a51 payments: send line items to Paylane (#409)
5f0a7c3 checkout: verify line items add up before authorizing (#407)
91b4d6f receipts: show promotion code and discount (#405)
e6b2d19 promotions: once-per-customer codes (#401)
3a9c8e4 locales: ja strings for the spring campaign (#398)
f27d0c1 (tag: v2.13.2) release: v2.13.2
0d7e5b2 currency: KRW and TWD (#396)
8c1e9a7 currency: narrow no-break space in fr formatting (#393)
b35f6d0 (tag: v2.13.1) release: v2.13.1
4e8a2f9 checkout: replay failed checkouts with their original error (#388)
2b7c0d4 gateway: timeouts are ORD-4105 with 504 (#386)
9f3e1a6 (tag: v2.13.0) release: v2.13.0
d05c7b3 store: failures(code, since) for the support console (#379)
"""

GIT_STATUS = """\
On branch main
Your branch is up to date with 'origin/main'.

Untracked files:
  (use "git add <file>..." to include in what will be committed)
	logs/

nothing added to commit but untracked files present (use "git add" to track)
"""

COMMIT_412 = """\
commit 7d3f0b8e2a9c41d6b0f5e3a8c7d21f94b6e0a153
Author: Priya Raman <priya.raman@tealeaf.example>
Date:   Fri Apr 12 16:22:41 2024 +0900

    pricing: allocate promotion discounts per line (#412)
    
    Paylane's BNPL methods (launching in JP in May) reject negative line items, so
    the promotion can no longer go to the gateway as its own "discount" line.
    Allocate the order discount across the product lines in proportion to their
    subtotals instead, and keep each line's share on PricedLine so that partial
    refunds give back the discounted price of a line (FIN-131).
"""

STAT_412 = """\
 orders/models.py      |  6 ++++--
 orders/pricing.py     | {pricing}
 orders/refunds.py     | 14 ++++++++------
 tests/test_pricing.py | 14 ++++++++++++++
"""


def pricing_before_412(text: str) -> str:
    """orders/pricing.py as it was before #412 introduced per-line discount shares."""
    start, end = text.index("def allocate_discount("), text.index("def shipping_for(")
    text = text[:start] + text[end:]
    for old, new in [
        (
            "3. the order discount is allocated across lines in proportion to their subtotals\n"
            "4. shipping",
            "3. shipping",
        ),
        ("5. tax (US only)", "4. tax (US only)"),
        ("    line_discounts = allocate_discount(discount, subtotals, currency)\n", ""),
        ("            discount=line_discount,\n", ""),
        (
            "            total=line_subtotal - line_discount,\n",
            "            total=line_subtotal,\n",
        ),
        (
            "        for line, line_subtotal, line_discount in zip(\n"
            "            cart.lines, subtotals, line_discounts, strict=True\n        )\n",
            "        for line, line_subtotal in zip(cart.lines, subtotals, strict=True)\n",
        ),
        (
            "    if quote.shipping:\n        items.append(",
            "    if quote.discount:\n"
            '        label = f"Discount ({quote.promo_code})"\n'
            '        items.append(PaymentLine("discount", label, 1, -quote.discount))\n'
            "    if quote.shipping:\n        items.append(",
        ),
        (
            '            f"  = {line.subtotal:>10}  - {line.discount:>9}  = {line.total:>10}"\n',
            '            f"  = {line.subtotal:>10}"\n',
        ),
    ]:
        assert old in text, old
        text = text.replace(old, new)
    return text


def git_show_412(ws: Workspace, *, stat: bool) -> str:
    before, after = pricing_before_412(ws.head["orders/pricing.py"]), ws.head["orders/pricing.py"]
    diff = unified("orders/pricing.py", before, after)
    if not stat:
        return COMMIT_412 + "\n" + diff
    lines = diff.splitlines()
    plus = sum(1 for d in lines if d.startswith("+") and not d.startswith("+++"))
    minus = sum(1 for d in lines if d.startswith("-") and not d.startswith("---"))
    bar = f"{plus + minus:2d} {'+' * plus}{'-' * minus}"
    files = STAT_412.format(pricing=bar)
    ins, dels = 4 + plus + 8 + 14, 2 + minus + 6
    return (
        COMMIT_412 + "\n" + files + f" 4 files changed, {ins} insertions(+), {dels} deletions(-)\n"
    )


# --------------------------------------------------------------------------------------
# Building the conversation.
# --------------------------------------------------------------------------------------

ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


@dataclass
class Call:
    name: str
    args: dict[str, object]
    run: object  # Workspace -> (text, is_error)
    check: bool = False  # a command whose output --materialize lets you re-check


def ls(path: str = ".") -> Call:
    return Call("ls", {"path": path}, lambda ws: (ws.ls(path), False))


def read(path: str, start: int | None = None, end: int | None = None) -> Call:
    args: dict[str, object] = {"path": path}
    if start is not None:
        args["start_line"] = start
    if end is not None:
        args["end_line"] = end
    return Call("read_file", args, lambda ws: (ws.read_file(path, start, end), False))


def grep(pattern: str, path: str = ".", include: str | None = None) -> Call:
    args: dict[str, object] = {"pattern": pattern, "path": path}
    if include:
        args["include"] = include
    return Call("grep", args, lambda ws: (ws.grep(pattern, path, include), False))


def bash(command: str, output: object, exit_code: int = 0, check: bool = False) -> Call:
    """``output``: the text, or a function of the workspace returning it (or text, code)."""

    def run(ws: Workspace) -> tuple[str, bool]:
        text, code = output(ws) if callable(output) else output, exit_code
        if isinstance(text, tuple):
            text, code = text
        if code:
            text = (
                text if text.endswith("\n") or not text else text + "\n"
            ) + f"[exit code: {code}]"
        return (text or "(no output)"), bool(code)

    return Call("bash", {"command": command}, run, check=check)


def pytest(command: str, check: bool = True, **options: object) -> Call:
    return bash(command, lambda ws: pytest_report(ws, **options), check=check)  # type: ignore[arg-type]


def edit(path: str, old: str, new: str) -> Call:
    return Call(
        "str_replace_editor",
        {"command": "str_replace", "path": path, "old_str": old, "new_str": new},
        lambda ws: ws.str_replace(path, old, new),
    )


class Session:
    def __init__(self, ws: Workspace, rng: random.Random, materialize: Path | None) -> None:
        self.ws = ws
        self.rng = rng
        self.messages: list[dict[str, object]] = []
        self.errors: set[str] = set()  # ids of tool calls whose result is an error
        self.materialize = materialize
        self.checks: list[dict[str, object]] = []

    def new_id(self) -> str:
        return "call_" + "".join(self.rng.choice(ID_CHARS) for _ in range(24))

    def system(self, text: str) -> None:
        self.messages.append({"role": "system", "content": text})

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})

    def act(self, text: str, *calls: Call) -> list[str]:
        """An assistant turn with tool calls, followed by one result per call, in order."""
        ids = [self.new_id() for _ in calls]
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": json.dumps(call.args, ensure_ascii=False),
                        },
                    }
                    for call_id, call in zip(ids, calls, strict=True)
                ],
            }
        )
        results = []
        for call_id, call in zip(ids, calls, strict=True):
            if call.check and self.materialize:
                self._snapshot(call)
            text_out, is_error = call.run(self.ws)  # type: ignore[operator]
            if is_error:
                self.errors.add(call_id)
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text_out})
            results.append(text_out)
            if call.check and self.materialize:
                self.checks[-1]["expected"] = text_out
        return results

    def _snapshot(self, call: Call) -> None:
        assert self.materialize is not None
        stage = self.materialize / f"{len(self.checks) + 1:02d}"
        for path, text in self.ws.files.items():
            target = stage / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self.checks.append({"stage": stage.name, "command": call.args["command"]})


# --------------------------------------------------------------------------------------
# Output of the ad-hoc scripts the agent runs (checked with --materialize).
# --------------------------------------------------------------------------------------

OUT_REPRO_BEFORE = """\
JPY (Japanese yen, exponent 0)
  MATCHA-200G   2 x      3480  =       6960  -      1044  =       5916
  CHASEN-80     1 x      2750  =       2750  -       412  =       2338
  YUNOMI-BLU    3 x      1290  =       3870  -       580  =       3290
  subtotal 13580  discount 2037 (SPRING15)
  shipping 0  tax 0  total 11543
  !! line items sum to 11544, off by +1 JPY

MATCHA-200G  exact share   1044 -> allocated 1044
CHASEN-80    exact share  412.5 -> allocated 412
YUNOMI-BLU   exact share  580.5 -> allocated 580
"""

OUT_REPRO_HALF_UP = """\
JPY (Japanese yen, exponent 0)
  MATCHA-200G   2 x      3480  =       6960  -      1044  =       5916
  CHASEN-80     1 x      2750  =       2750  -       413  =       2337
  YUNOMI-BLU    3 x      1290  =       3870  -       581  =       3289
  subtotal 13580  discount 2037 (SPRING15)
  shipping 0  tax 0  total 11543
  !! line items sum to 11542, off by -1 JPY

MATCHA-200G  exact share   1044 -> allocated 1044
CHASEN-80    exact share  412.5 -> allocated 413
YUNOMI-BLU   exact share  580.5 -> allocated 581
"""

OUT_REPRO_AFTER = """\
JPY (Japanese yen, exponent 0)
  MATCHA-200G   2 x      3480  =       6960  -      1044  =       5916
  CHASEN-80     1 x      2750  =       2750  -       412  =       2338
  YUNOMI-BLU    3 x      1290  =       3870  -       581  =       3289
  subtotal 13580  discount 2037 (SPRING15)
  shipping 0  tax 0  total 11543

MATCHA-200G  exact share   1044 -> allocated 1044
CHASEN-80    exact share  412.5 -> allocated 412
YUNOMI-BLU   exact share  580.5 -> allocated 581
"""

OUT_COMPARE = """\
JPY: v2.14.0 off in  1078 of 20000 carts ( 5.39%)   now: 0
KRW: v2.14.0 off in  1058 of 20000 carts ( 5.29%)   now: 0
USD: v2.14.0 off in  3915 of 20000 carts (19.57%)   now: 0
EUR: v2.14.0 off in  3870 of 20000 carts (19.35%)   now: 0
GBP: v2.14.0 off in  4019 of 20000 carts (20.09%)   now: 0
"""

OUT_REFUNDS = """\
refund MATCHA-200G  -> 5916
refund CHASEN-80    -> 2338
refund YUNOMI-BLU   -> 3289
refund all three     -> 11543 (order total 11543)
"""

OUT_RECEIPT_BEFORE = """\
ご注文明細 ord_8f3a2c91
============================================
宇治抹茶 200g × 2                    6,960円
茶筅 80本立 × 1                      2,750円
湯呑み（藍） × 3                     3,870円
--------------------------------------------
小計                                13,580円
割引（SPRING15）                   -2,037.00
送料                                    無料
合計                                11,543円
============================================
※表示価格はすべて税込です。
Tealeafをご利用いただき、誠にありがとうございます。
返品・交換は商品到着後14日以内にカスタマーサポートまでご連絡ください。

"""

OUT_RECEIPT_AFTER = """\
ご注文明細 ord_8f3a2c91
============================================
宇治抹茶 200g × 2                    6,960円
茶筅 80本立 × 1                      2,750円
湯呑み（藍） × 3                     3,870円
--------------------------------------------
小計                                13,580円
割引（SPRING15）                    -2,037円
送料                                    無料
合計                                11,543円
============================================
※表示価格はすべて税込です。
Tealeafをご利用いただき、誠にありがとうございます。
返品・交換は商品到着後14日以内にカスタマーサポートまでご連絡ください。

"""

OUT_RECEIPTS_OTHER = """\
Tealeaf order ord_test0001
============================================
Uji matcha 200g x 1                   $42.00
Bamboo whisk, 80 tines x 1            $24.00
--------------------------------------------
Subtotal                              $66.00
Discount (SPRING15)                   -$9.90
Shipping                               $6.95
Total                                 $63.05
============================================
Thank you for shopping with Tealeaf.
Returns and exchanges: contact support within 14 days of delivery.

Tealeaf-Bestellung ord_test0001
============================================
Tokoname kyusu 350ml x 1             72,00 €
Hojicha 100g x 2                     19,60 €
--------------------------------------------
Zwischensumme                        91,60 €
Rabatt (SPRING15)                   -13,74 €
Versand                            Kostenlos
Gesamt                               77,86 €
============================================
Vielen Dank für Ihren Einkauf bei Tealeaf.
Rücksendungen und Umtausch: bitte innerhalb von 14 Tagen nach Lieferung den Support kontaktieren.

"""

OUT_GIT_LOG_L = """\
91b4d6f receipts: show promotion code and discount (#405)

diff --git a/orders/receipts.py b/orders/receipts.py
--- a/orders/receipts.py
+++ b/orders/receipts.py
@@ -50,0 +50,3 @@
+    if quote.discount:
+        label = strings["receipt.discount"].format(code=quote.promo_code or "")
+        rows.append((label, f"-{quote.discount:,.2f}"))
"""


# --------------------------------------------------------------------------------------
# The session.
# --------------------------------------------------------------------------------------

SYSTEM_PROMPT = f"""\
You are Forge, an autonomous software engineering agent. You work in a Linux sandbox on \
the repository checked out at {ROOT}; every tool runs with that directory as its working \
directory, and paths you pass to tools are relative to it.

# Tools

- `ls(path)`: list a directory. Entries ending in `/` are directories.
- `read_file(path, start_line?, end_line?)`: print a file with line numbers, like `cat -n`. \
Prefer reading whole files; use a line range for long files you have already read.
- `grep(pattern, path?, include?)`: search files under `path` for a Python regular \
expression; prints `path:line:text` for every matching line. `include` is a file-name \
glob such as `*.py`.
- `bash(command)`: run a command with bash (120 s timeout). Returns stdout and stderr \
combined; a non-zero exit status is reported on the last line as `[exit code: N]`. There \
is no network access.
- `str_replace_editor(command, path, ...)`: edit files. `command` is `str_replace` \
(replace `old_str`, which must occur exactly once in the file, by `new_str`), `insert` \
(insert `new_str` after line `insert_line`) or `create` (write `file_text` to a new file).

# How to work

- Understand before you change anything: read the code involved and reproduce the problem.
- For a bug, write a regression test that fails before you fix it, and run the whole test \
suite before you finish.
- Keep changes small and in the style of the surrounding code; do not reformat unrelated \
code.
- Call several tools in one turn when the calls do not depend on each other.
- Never push, never rewrite history, never touch anything outside the repository. Ask \
before you change a public interface or anything under `orders/payments/`.
- When you are done, reply with a short summary: the root cause, what you changed, how you \
verified it, and anything the user should follow up on.

# Environment

Python 3.11.9 in `.venv` (activated), pytest 8.2, ruff 0.4, mypy 1.10, git 2.43. Today is \
Friday 2024-04-19 (JST)."""

BUG_REPORT = """\
Hi Forge — we have a production issue in orders-svc since Tuesday's deploy of v2.14.0.

Customers in Japan are getting an error at checkout: ORD-4102 "total mismatch". Support \
escalated order ord_8f3a2c91: a JPY cart with 3 lines (2 × Uji matcha 200g at ¥3,480, \
1 × bamboo whisk at ¥2,750, 3 × indigo yunomi at ¥1,290) and promo code SPRING15 (15% \
off). Sentry has it as

    OrderError: ORD-4102 total mismatch: line items sum to 11544, order total is 11543

Since the deploy there have been 37 failed checkouts out of 1,184 JPY checkouts with a \
promo code (about 3.1%). Nothing changed in the Paylane config. I suspect the new \
per-line discount code in orders/pricing.py (PR #412) but haven't had time to dig in. I \
copied yesterday's log from one of the pods to logs/checkout-2024-04-18.log.

Please find the root cause, fix it with a regression test, and keep the whole test suite \
green. Don't touch the Paylane client."""

FOLLOW_UP = """\
Thanks, that explanation makes sense. While you're in there, one more from support: the \
confirmation e-mail for JP customers shows the discount with decimals, like this:

    割引（SPRING15）                   -2,037.00

while every other row is in yen, e.g. 「小計 13,580円」. A customer wrote in: \
「割引額が「-2,037.00」と表示されていますが、円ではなくドルで請求されたのでしょうか？」 \
(she thought she had been charged in dollars). Can you fix that too? The Japanese \
strings are in locales/ja.json — please don't change the wording, 文言はマーケ確認済みです。"""

COMMIT_REQUEST = """\
Looks great, thank you. Please commit this on a new branch \
fix/ord-4102-discount-allocation (don't push, I'll open the PR) and give me a short PR \
description I can paste."""

REPRO = """\
python - <<'EOF'
from decimal import Decimal

from orders.models import Cart, LineItem
from orders.pricing import explain_quote, quote_cart
from orders.promotions import percent_off

# ord_8f3a2c91 as support described it
cart = Cart(
    id="crt_repro",
    currency="JPY",
    lines=[
        LineItem("MATCHA-200G", "宇治抹茶 200g", 2, Decimal("3480")),
        LineItem("CHASEN-80", "茶筅 80本立", 1, Decimal("2750")),
        LineItem("YUNOMI-BLU", "湯呑み（藍）", 3, Decimal("1290")),
    ],
    promo_code="SPRING15",
    locale="ja",
)
quote = quote_cart(cart, percent_off("SPRING15", 15))
print("\\n".join(explain_quote(quote)))
print()
for line in quote.lines:
    exact = quote.discount * line.subtotal / quote.subtotal
    print(f"{line.sku:<12} exact share {exact!s:>6} -> allocated {line.discount}")
EOF"""

COMPARE = """\
python - <<'EOF'
import random
from decimal import ROUND_HALF_EVEN, Decimal

from orders.currency import get_currency, quantize
from orders.pricing import allocate_discount


def allocate_v2_14(discount, subtotals, currency):
    base = sum(subtotals)
    return [(discount * s / base).quantize(currency.quantum, ROUND_HALF_EVEN) for s in subtotals]


rng = random.Random(4102)
for code in ("JPY", "KRW", "USD", "EUR", "GBP"):
    currency = get_currency(code)
    step = 10 if currency.exponent == 0 else 1  # yen and won prices end in 0
    old = new = 0
    for _ in range(20_000):
        subtotals = [
            Decimal(rng.randrange(300, 9000, step)).scaleb(-currency.exponent) * rng.randint(1, 3)
            for _ in range(rng.randint(1, 5))
        ]
        discount = quantize(sum(subtotals) * rng.choice([10, 15, 20]) / 100, currency)
        old += sum(allocate_v2_14(discount, subtotals, currency)) != discount
        new += sum(allocate_discount(discount, subtotals, currency)) != discount
    print(f"{code}: v2.14.0 off in {old:5d} of 20000 carts ({old / 200:5.2f}%)   now: {new}")
EOF"""

REFUNDS = """\
python - <<'EOF'
from orders.promotions import percent_off
from orders.refunds import refund_amount_for_lines
from tests.factories import make_cart, make_order

cart = make_cart(
    "JPY", [("MATCHA-200G", 2, "3480"), ("CHASEN-80", 1, "2750"), ("YUNOMI-BLU", 3, "1290")]
)
order = make_order(cart, percent_off("SPRING15", 15))
for sku in ("MATCHA-200G", "CHASEN-80", "YUNOMI-BLU"):
    print(f"refund {sku:<12} -> {refund_amount_for_lines(order, [sku])}")
everything = refund_amount_for_lines(order, ["MATCHA-200G", "CHASEN-80", "YUNOMI-BLU"])
print(f"refund all three     -> {everything} (order total {order.quote.total})")
EOF"""

RECEIPT = """\
python - <<'EOF'
from orders.promotions import percent_off
from orders.receipts import render_receipt
from tests.factories import make_cart, make_order

cart = make_cart(
    "JPY",
    [("MATCHA-200G", 2, "3480"), ("CHASEN-80", 1, "2750"), ("YUNOMI-BLU", 3, "1290")],
    locale="ja",
)
print(render_receipt(make_order(cart, percent_off("SPRING15", 15), order_id="ord_8f3a2c91")))
EOF"""

RECEIPTS_OTHER = """\
python - <<'EOF'
from orders.promotions import percent_off
from orders.receipts import render_receipt
from tests.factories import make_cart, make_order

usd = make_cart("USD", [("MATCHA-200G", 1, "42.00"), ("CHASEN-80", 1, "24.00")])
eur = make_cart("EUR", [("KYUSU-350", 1, "72.00"), ("HOJICHA-100G", 2, "9.80")], locale="de")
for cart in (usd, eur):
    print(render_receipt(make_order(cart, percent_off("SPRING15", 15))))
EOF"""

DECIMAL_CONTEXT = 'python -c "import decimal; print(decimal.getcontext())"'

# The assertion details pytest prints for each failure (checked with --materialize).
E_SUM_2036 = [
    "AssertionError: assert Decimal('2036') == Decimal('2037')",
    " +  where Decimal('2036') = sum(<generator object "
    "test_line_discounts_add_up_to_order_discount_jpy.<locals>.<genexpr> at 0x7f3b2c8e1a40>)",
    " +  and   Decimal('2037') = Quote(currency='JPY', lines=(PricedLine(sku='MATCHA-200G', "
    "name='Uji matcha 200g', quantity=2, unit_price=Decimal('348...80'), "
    "discount=Decimal('2037'), shipping=Decimal('0'), tax=Decimal('0'), "
    "total=Decimal('11543'), promo_code='SPRING15').discount",
]
E_SUM_2038 = [
    line.replace("2036", "2038").replace("0x7f3b2c8e1a40", "0x7f1d9a6c3b30") for line in E_SUM_2036
]

NEW_TEST = """\
def test_line_discounts_add_up_to_order_discount_jpy():
    # ord_8f3a2c91 (ORD-4102 in production): 15% of 13,580 yen is 2,037 yen, but the
    # per-line shares 1044 + 412.5 + 580.5 were each rounded half-even, to 1044 + 412 + 580.
    cart = make_cart(
        "JPY",
        [("MATCHA-200G", 2, "3480"), ("CHASEN-80", 1, "2750"), ("YUNOMI-BLU", 3, "1290")],
    )

    quote = quote_cart(cart, percent_off("SPRING15", 15))

    assert quote.discount == Decimal("2037")
    assert sum(line.discount for line in quote.lines) == quote.discount
    assert quote.line_sum == quote.total == Decimal("11543")


"""

ALLOCATE_V2_14 = """\
    base = sum(subtotals, ZERO)
    if not discount or not base:
        return [ZERO for _ in subtotals]
    shares = []
    for subtotal in subtotals:
        share = discount * subtotal / base
        shares.append(quantize(share, currency))  # half-up, like every other amount
    return shares
"""

ALLOCATE_FIXED = '''\
    The shares always add up to ``discount`` exactly (largest-remainder method): every
    line first gets its proportional share rounded *down* to the currency's minor unit,
    then the units left over go one each to the lines with the largest remainders (ties:
    the larger subtotal, then the earlier line). Rounding each share on its own, in any
    rounding mode, can leave the shares a unit or more off the discount -- that was
    ORD-4102 in 2.14.0.
    """
    base = sum(subtotals, ZERO)
    if not discount or not base:
        return [ZERO for _ in subtotals]
    quantum = currency.quantum
    exact = [discount * subtotal / base for subtotal in subtotals]
    shares = [share.quantize(quantum, rounding=ROUND_DOWN) for share in exact]
    leftover = int((discount - sum(shares, ZERO)) / quantum)
    by_remainder = sorted(
        range(len(exact)),
        key=lambda i: (exact[i] - shares[i], subtotals[i], -i),
        reverse=True,
    )
    for i in by_remainder[:leftover]:
        shares[i] += quantum
    return shares
'''

RANDOM_TEST = """\
def test_allocate_discount_always_adds_up():
    rng = random.Random(412)
    for code in ("USD", "JPY", "KRW", "EUR", "KWD"):
        currency = get_currency(code)
        for _ in range(300):
            subtotals = [
                Decimal(rng.randint(1, 90_000)) * currency.quantum * rng.randint(1, 5)
                for _ in range(rng.randint(1, 8))
            ]
            discount = quantize(sum(subtotals) * rng.randint(1, 60) / 100, currency)

            shares = allocate_discount(discount, subtotals, currency)

            assert sum(shares) == discount
            for share, subtotal in zip(shares, subtotals, strict=True):
                assert 0 <= share <= subtotal
                assert share == share.quantize(currency.quantum)


"""

CHECKOUT_TEST = """


def test_checkout_jpy_promotion_line_items_add_up(promotions, gateway, store, clock):
    # ord_8f3a2c91 failed with ORD-4102 in 2.14.0: line items 11544, total 11543
    cart = make_cart(
        "JPY",
        [("MATCHA-200G", 2, "3480"), ("CHASEN-80", 1, "2750"), ("YUNOMI-BLU", 3, "1290")],
        promo="SPRING15",
        locale="ja",
    )

    order = run(cart, promotions, gateway, store, clock)

    assert order.status is OrderStatus.AUTHORIZED
    request = gateway.requests[0]
    assert request.amount_minor == 11543
    assert [line[3] for line in request.lines] == [5916, 2338, 3289]
"""

RECEIPT_TESTS = """


def test_receipt_ja_discount_is_in_yen():
    cart = make_cart(
        "JPY",
        [("MATCHA-200G", 2, "3480"), ("CHASEN-80", 1, "2750"), ("YUNOMI-BLU", 3, "1290")],
        locale="ja",
    )

    lines = render_receipt(make_order(cart, percent_off("SPRING15", 15))).splitlines()

    assert "割引（SPRING15）                    -2,037円" in lines
    assert "合計                                11,543円" in lines


def test_receipt_en_discount_has_currency_symbol():
    cart = make_cart("USD", [("MATCHA-200G", 1, "42.00"), ("CHASEN-80", 1, "24.00")])

    receipt = render_receipt(make_order(cart, percent_off("SPRING15", 15)))

    assert "Discount (SPRING15)                   -$9.90" in receipt.splitlines()
"""

CHANGELOG_ENTRY = """\
# Changelog

All notable changes to orders-svc. Dates are deploy dates (JST).

## Unreleased

- Fix: checkouts with a promotion failed with ORD-4102 "total mismatch" when the
  per-line shares of the discount did not add up to the discount (2.14.0 rounded each
  share on its own, half-even). Discounts are now allocated by the largest-remainder
  method, so the line items always add up to the total.
- Fix: receipts showed the discount as a bare number with two decimals ("-2,037.00")
  instead of in the order's currency ("-2,037円", "-$9.90").
"""

COMMIT_MESSAGE = """\
pricing: allocate discounts by largest remainder so line items add up (ORD-4102)

2.14.0 (#412) split the order discount across lines by rounding each
line's share on its own with the decimal context's default, half-even.
The shares then need not add up to the discount -- 15% of 13,580 yen is
2,037, but 1044 + 412.5 + 580.5 rounded to 1044 + 412 + 580 -- so the
Paylane line items were a unit off the total and checkout's
verify_totals refused the order with ORD-4102.

Allocate with the largest-remainder method instead: round every share
down, then hand out the leftover minor units by largest remainder. Adds
regression tests for ord_8f3a2c91 (pricing and checkout) and a seeded
randomized test over five currencies.

Also format the receipt's discount row with format_money, so JP
receipts show "-2,037円" rather than "-2,037.00"."""


def story(s: Session, stats: LogStats) -> None:
    ws = s.ws
    mismatch_total = sum(stats.mismatches.values())
    # The narration below describes this particular log; fail loudly if it changes.
    assert stats.mismatches == {"JPY": 4, "GBP": 1}, stats.mismatches
    assert stats.mismatch_promos == {"SPRING15": 4, "TEA500": 1}, stats.mismatch_promos
    assert stats.off_by == {"1", "-1", "-0.01"}, stats.off_by
    assert stats.timeouts == 0 and stats.declines > 0, stats
    log = ws.files[LOG_PATH]
    assert "PRM-2002" in log and "PRM-2003" in log and "PRM-2004" not in log
    assert re.search(r"currency=JPY line_sum=\d+ total=\d+ promo=TEA500", log)

    s.system(SYSTEM_PROMPT)
    s.user(BUG_REPORT)

    s.act(
        "I'll start by getting oriented: the repository layout, the recent history around "
        "the v2.14.0 release, and the working tree state.",
        ls("."),
        bash("git log --oneline -n 15", GIT_LOG),
        bash("git status", GIT_STATUS),
    )
    s.act(
        "v2.14.0 is HEAD, and #412 (per-line discount allocation) landed right before the "
        "release, together with #409 (line items sent to Paylane) and #407 (the line-item "
        "check that raises ORD-4102). The log file is untracked, which is expected. Let me "
        "read the README and the changelog entry for 2.14.0.",
        read("README.md"),
        read("CHANGELOG.md"),
    )
    s.act(
        "The README has a rule that matters here: \"The `decimal` module's default rounding "
        'is half-even; do not call `.quantize()` without a rounding mode." Let me see the '
        "package and the tests.",
        ls("orders"),
        ls("tests"),
    )
    s.act(
        "Before reading code, how are the tests and linters run here?",
        read("Makefile"),
        read("pyproject.toml"),
    )
    s.act(
        "`make test` is plain `python -m pytest` (with `-ra` and warnings as errors from "
        "pyproject), `make lint` is ruff plus strict mypy. pricing.py is where #412 landed, "
        "so I'll read it in full.",
        read("orders/pricing.py"),
    )
    s.act(
        "Step 3 of the documented order of operations is the new allocation. "
        "`allocate_discount` computes each line's share as `discount * subtotal / base` and "
        "rounds it with `share.quantize(currency.quantum)` — no rounding argument, so it "
        "uses the decimal context's rounding, which is half-even unless someone changed it. "
        "Each share is rounded independently, so nothing guarantees that the shares add up "
        "to `discount`. Before I commit to that theory, let me see where ORD-4102 is raised "
        "and what exactly is compared.",
        grep("ORD-4102"),
    )
    s.act(
        "It is raised in one place, `orders/checkout.py`; the runbook has an entry for it "
        "too. Reading both:",
        read("orders/checkout.py"),
        read("docs/runbook.md"),
    )
    s.act(
        "The runbook confirms that an ORD-4102 means no money moved — `verify_totals` runs "
        "before `gateway.authorize`, and the failed order is stored with its failure code. "
        "Let me check the storage side, since support will want to find the affected "
        "orders later.",
        read("orders/storage.py"),
    )
    s.act(
        '`failures("ORD-4102", since)` will list the affected orders for support. And what '
        "customers saw on the error page:",
        grep(r'"error\.ORD-4102"', "locales"),
    )
    s.act(
        "`verify_totals` compares `quote.line_sum` with `quote.total`. I need the definition "
        "of `line_sum` and the currency helpers (`quantize`, `quantum`, `to_minor`).",
        read("orders/models.py"),
        read("orders/currency.py"),
    )
    s.act(
        "So `quote.total = subtotal - discount + shipping + tax`, while `line_sum` adds up "
        "`line.total = line.subtotal - line.discount` for every line plus shipping and tax. "
        "The two differ exactly when the per-line discounts do not add up to the order "
        "discount. `currency.quantize` rounds half-up, but `allocate_discount` does not use "
        "it. Let me confirm what the default context rounding is in this environment.",
        bash(
            DECIMAL_CONTEXT,
            "Context(prec=28, rounding=ROUND_HALF_EVEN, Emin=-999999, Emax=999999, "
            "capitals=1, clamp=0, flags=[], traps=[InvalidOperation, DivisionByZero, "
            "Overflow])\n",
            check=True,
        ),
    )
    s.act(
        "Half-even, as expected. Paylane itself is strict about this too; let me see how the "
        "client builds the request and what the fake gateway checks, to be sure the fake "
        "reproduces production behaviour in tests.",
        read("orders/payments/gateway.py"),
        read("orders/payments/fake.py"),
    )
    s.act(
        "`FakeGateway.authorize` rejects line items that do not add up to the amount with "
        "`line_items_mismatch`, like Paylane, so a checkout-level test will be meaningful. "
        "Next, every other `.quantize()` call that might rely on the context rounding:",
        bash(
            r'rg -n "\.quantize\(" orders', "bash: line 1: rg: command not found\n", exit_code=127
        ),
    )
    s.act(
        "No ripgrep in the sandbox; the grep tool does the same.",
        grep(r"\.quantize\(", "orders"),
    )
    s.act(
        "Four calls. `currency.quantize` passes `ROUND_HALF_UP` explicitly. `is_whole` only "
        "compares an amount with its own quantized value, and the comparison comes out the "
        "same in any rounding mode; `from_minor` quantizes an exact value. The only call "
        "where the rounding mode changes the result is the one in `allocate_discount`. Let "
        "me check that the half-up rule is pinned by a test before I rely on it.",
        read("tests/test_currency.py"),
    )
    s.act(
        "`test_quantize_rounds_half_up` pins it (412.5 → 413 in yen), so `quantize` is the "
        "documented rounding. Who wrote the allocation, and when?",
        bash(
            "git blame -L '/def allocate_discount/,+17' orders/pricing.py",
            lambda w: blame_allocate(w),
        ),
    )
    s.act(
        "All of it is from 7d3f0b8 (#412), four days before the release. Let me look at what "
        "#412 changed in pricing.py, to see what the allocation replaced.",
        bash("git show --stat 7d3f0b8", lambda w: git_show_412(w, stat=True)),
        bash("git show 7d3f0b8 -- orders/pricing.py", lambda w: git_show_412(w, stat=False)),
    )
    s.act(
        'Before #412 the discount went to Paylane as a single negative "discount" line, so '
        "the line items always added up. #412 replaced it with per-line shares rounded one "
        "by one, which is exactly where an off-by-one-unit can come from. Now the log. "
        "First its size:",
        bash(
            f"wc -l -c {LOG_PATH} && head -n 3 {LOG_PATH}",
            lambda w: (
                f"  {w.files[LOG_PATH].count(chr(10))} {len(w.files[LOG_PATH].encode())} "
                f"{LOG_PATH}\n" + "".join(w.files[LOG_PATH].splitlines(True)[:3])
            ),
            check=True,
        ),
    )
    s.act(
        f"About {round(stats.lines, -1)} lines. Let me pull out the ORD-4102 lines first.",
        grep("ORD-4102 total mismatch order=", LOG_PATH),
    )
    s.act(
        f"{mismatch_total} mismatches in this pod's sixteen hours, and they are not all JPY: "
        "there is a GBP one, off by -0.01; two of the JPY ones are off by -1 rather than +1; "
        "and one is with TEA500 (a fixed ¥500) rather than SPRING15. That fits independent "
        "rounding of the shares (which can drift either way, for any kind of discount) much "
        "better than anything yen-specific. "
        "Let me look at the reported order and at the volume per currency.",
        grep("ord_8f3a2c91", "logs"),
        bash(
            f"grep -c 'checkout started' {LOG_PATH}; "
            f"grep -o 'checkout started .* currency=[A-Z]*' {LOG_PATH} "
            "| grep -o 'currency=[A-Z]*' | sort | uniq -c | sort -rn",
            lambda w: log_volume(w),
            check=True,
        ),
    )
    s.act(
        "I want the whole picture of that day rather than just the grep hits — whether "
        "anything else failed around the mismatches (gateway errors, retries, promotion "
        "rejections) — so I'll read the full log once.",
        read(LOG_PATH),
    )
    s.act(
        f"Reading through it: {stats.checkouts - stats.promo_rejections} checkouts started; "
        f"apart from the {mismatch_total} ORD-4102s there are {stats.declines} ordinary "
        "card declines (402 from Paylane), "
        f"{stats.promo_rejections} promotion rejections (PRM-2002 for the expired WINTER20, "
        "PRM-2003 for SAVE5 and TEA500 used outside their currency) "
        "and no gateway timeouts. The mismatching requests never reached Paylane: the 409 "
        "is returned straight after `checkout started`, as `verify_totals` intends. So "
        'nothing else is going on that day. The `[req=…]` ids and the "request failed" '
        "lines come from the API layer; let me check that the 409 is the handler's doing "
        "and not a retry somewhere.",
        read("orders/api/handlers.py"),
        read("orders/app.py"),
        read("tests/test_handlers.py"),
    )
    s.act(
        "`error_response` logs ORD-4102 at ERROR and returns the 409 with the localised "
        "message; the request id comes from the middleware in app.py, and uvicorn's access "
        "lines are logged outside it (hence `req=-`). No retries anywhere, and the handler "
        "tests never exercise a promotion through checkout. Now the "
        "order-level discount: promotions.py and the SPRING15 definition.",
        read("orders/promotions.py"),
        read("config/promotions.json"),
    )
    s.act(
        "`Promotion.discount` rounds the order discount once, half-up, via "
        "`currency.quantize`: 15% of ¥13,580 is exactly ¥2,037. Let me reproduce "
        "ord_8f3a2c91 with the quote code directly, using the `explain_quote` helper from "
        "pricing.py.",
        bash(REPRO, OUT_REPRO_BEFORE, check=True),
    )
    s.act(
        "Reproduced: the exact shares are 1044, 412.5 and 580.5. Half-even rounds both "
        "halves down (412 and 580 are even), so the lines carry 2,036 of discount, the line "
        "items add up to 11,544 and the total is 11,543 — the exact numbers in Sentry. Yen "
        "is hit the most because with no minor unit, any line subtotal that is a multiple "
        "of 10 but not of 20 yields a share ending in .5 at 15%. But it is not yen-specific.\n\n"
        "Before changing anything, the baseline: the full test suite on an untouched tree.",
        pytest("python -m pytest", seconds="0.84"),
    )
    s.act(
        "All 42 pass, so nothing covers a half-unit tie. Let me read the pricing tests and "
        "the factories they use, so a regression test fits in.",
        read("tests/test_pricing.py"),
        read("tests/factories.py"),
    )
    s.act(
        "The fixtures (promotions, fake gateway, store) are in conftest.py; let me check them "
        "too, because I also want a checkout-level test through `FakeGateway`, which applies "
        "Paylane's line-items rule.",
        read("tests/conftest.py"),
    )
    s.act(
        "I'll add the regression test next to the other allocation tests, with the cart from "
        "ord_8f3a2c91. It asserts the property that matters (the shares add up to the "
        "discount, the line items to the total) rather than one particular split.",
        edit(
            "tests/test_pricing.py",
            "def test_payment_lines_include_shipping_and_tax():\n",
            NEW_TEST + "def test_payment_lines_include_shipping_and_tax():\n",
        ),
    )
    s.act(
        "Now the suite should show exactly one failure:",
        pytest(
            "python -m pytest",
            seconds="0.91",
            failures=(
                Failure(
                    "tests/test_pricing.py::test_line_discounts_add_up_to_order_discount_jpy",
                    "assert sum(line.discount",
                    E_SUM_2036,
                ),
            ),
        ),
    )
    s.act(
        "It fails exactly as in production: 2036 vs 2037. Let me look at the function once "
        "more before touching it.",
        read("orders/pricing.py", 96, 113),
    )
    s.act(
        "The quickest change is to round the "
        "shares half-up with `currency.quantize`, like every other amount in the codebase "
        "(and as the README asks). I'm not convinced that is sufficient, but it is the "
        "obvious candidate and the test will tell.",
        edit(
            "orders/pricing.py",
            "        shares.append(share.quantize(currency.quantum))\n",
            "        shares.append(quantize(share, currency))"
            "  # half-up, like every other amount\n",
        ),
    )
    s.act(
        "Running the suite again:",
        pytest(
            "python -m pytest",
            seconds="0.88",
            failures=(
                Failure(
                    "tests/test_pricing.py::test_line_discounts_add_up_to_order_discount_jpy",
                    "assert sum(line.discount",
                    E_SUM_2038,
                ),
            ),
        ),
    )
    s.act(
        "Still failing, now with 2038. Let me see the split with the reproduction script.",
        bash(REPRO, OUT_REPRO_HALF_UP, check=True),
    )
    s.act(
        "As I suspected, half-up just moves the error the other way: 412.5 → 413 and "
        "580.5 → 581 gives 2,038. This is the general problem with rounding each share "
        "independently: with n lines, each share can be off by up to half a unit, so their "
        "sum can be off by up to n/2 units, whatever the rounding mode. The fix has to make "
        "the shares add up by construction. The standard way is the largest-remainder "
        "(Hamilton) method: round every share down, then give the leftover units one at a "
        "time to the lines with the largest fractional remainders.\n\n"
        "Before rewriting it, let me check who relies on the per-line discounts. Refunds do, "
        "according to the docstring.",
        read("orders/refunds.py"),
        grep(r"allocate_discount|\.discount\b", "orders"),
    )
    s.act(
        "Refunds use `line.total` (subtotal minus the line's share) and give back the "
        "remainder of the order with the last lines, so any allocation that adds up is "
        "consistent for them; with the old one a full refund line by line was also a unit "
        "off. `allocate_discount` has no other callers. I'll rewrite it with the "
        "largest-remainder method (ties go to the larger subtotal, then to the earlier line, "
        "so the result is deterministic) and import `ROUND_DOWN`.",
        edit(
            "orders/pricing.py",
            "from decimal import Decimal\n\nfrom orders.currency import Currency, "
            "checkout_currency, is_whole, quantize\n",
            "from decimal import ROUND_DOWN, Decimal\n\nfrom orders.currency import Currency, "
            "checkout_currency, is_whole, quantize\n",
        ),
        edit(
            "orders/pricing.py",
            '    discounted price of the refunded line (see orders.refunds).\n    """\n'
            + ALLOCATE_V2_14,
            "    discounted price of the refunded line (see orders.refunds).\n\n" + ALLOCATE_FIXED,
        ),
    )
    s.act(
        "The function was replaced, but the import edit failed: I quoted the import line from "
        "memory, and it also imports `get_currency` (for `explain_quote`). I'll edit just the "
        "`decimal` import.",
        edit(
            "orders/pricing.py",
            "from decimal import Decimal\n",
            "from decimal import ROUND_DOWN, Decimal\n",
        ),
    )
    s.act(
        "Let me re-read the edited part of pricing.py as a whole before running anything.",
        read("orders/pricing.py", 1, 140),
    )
    s.act(
        "That reads right. `leftover` is a whole number of units because the discount and "
        "the rounded-down shares are all whole units, and it is smaller than the number of "
        "lines because every remainder is below one unit. Running the suite:",
        pytest("python -m pytest", seconds="0.86"),
    )
    s.act(
        "43 passed, including the regression test. The reproduction script again:",
        bash(REPRO, OUT_REPRO_AFTER, check=True),
    )
    s.act(
        "No drift line any more: 1,044 + 412 + 581 = 2,037 and the total is ¥11,543. The "
        "change so far:",
        bash("git diff orders/pricing.py", lambda w: w.git_diff(["orders/pricing.py"])),
    )
    s.act(
        "Now I'll pin the exact split in the "
        "regression test (1044 + 412 + 581: the tie between the two .5 remainders goes to "
        "the yunomi line, which has the larger subtotal), and add a seeded randomized test "
        "that checks the invariants over many carts and currencies, including a 3-decimal "
        "one (KWD).",
        edit(
            "tests/test_pricing.py",
            "    assert sum(line.discount for line in quote.lines) == quote.discount\n"
            '    assert quote.line_sum == quote.total == Decimal("11543")\n',
            "    assert sum(line.discount for line in quote.lines) == quote.discount\n"
            '    assert [line.discount for line in quote.lines] == [Decimal("1044"), '
            'Decimal("412"), Decimal("581")]\n'
            '    assert quote.line_sum == quote.total == Decimal("11543")\n',
        ),
        edit(
            "tests/test_pricing.py",
            "def test_payment_lines_include_shipping_and_tax():\n",
            RANDOM_TEST + "def test_payment_lines_include_shipping_and_tax():\n",
        ),
        edit(
            "tests/test_pricing.py",
            "from decimal import Decimal\n\nimport pytest\n\nfrom orders.currency import "
            "get_currency\n",
            "import random\nfrom decimal import Decimal\n\nimport pytest\n\n"
            "from orders.currency import get_currency, quantize\n",
        ),
    )
    s.act(
        "And the checkout-level test: the same cart through `checkout()` with the fake "
        "gateway, which rejects line items that do not add up, just as Paylane does.",
        read("tests/test_checkout.py"),
    )
    s.act(
        "`run` and `OrderStatus` are already there. Appending the test at the end of the file:",
        edit(
            "tests/test_checkout.py",
            '    with pytest.raises(OrderError, match="ORD-4106"):\n'
            '        run(other, promotions, gateway, store, clock, idempotency_key="idem-2")\n',
            '    with pytest.raises(OrderError, match="ORD-4106"):\n'
            '        run(other, promotions, gateway, store, clock, idempotency_key="idem-2")\n'
            + CHECKOUT_TEST,
        ),
    )
    s.act(
        "Running the two test modules I touched, verbosely:",
        pytest(
            "python -m pytest tests/test_pricing.py tests/test_checkout.py -v",
            paths=["tests/test_pricing.py", "tests/test_checkout.py"],
            verbose=True,
            seconds="0.97",
        ),
    )
    s.act(
        "All green. To see the size of the problem, I'll compare the 2.14.0 allocation with "
        "the new one on 20,000 random carts per currency (1–5 lines, prices like the "
        "catalogue's, 10/15/20% off).",
        bash(COMPARE, OUT_COMPARE, check=True),
    )
    s.act(
        "And refunds: returning ord_8f3a2c91's lines one by one should now give back exactly "
        "what the customer paid.",
        bash(REFUNDS, OUT_REFUNDS, check=True),
    )
    s.act(
        "The new allocation is never off. The old one was off in about 5% of random yen and "
        "won carts — the same order of magnitude as the 3.1% you measured — and in about 20% "
        "of the dollar, euro and pound ones. Those random carts have arbitrary cent prices, "
        "though, while the storefront's dollar and euro prices are mostly whole (42.00, "
        "24.00, ...), which makes exact shares far more likely there; that is presumably why "
        "production failures are concentrated in JPY. The per-line refunds now add up to "
        "the amount charged.\n\n"
        "One last look at checkout.py, to make sure nothing else recomputes line totals on "
        "its own (for example when building the Paylane request).",
        read("orders/checkout.py"),
    )
    s.say(
        "Status update before I wrap up.\n\n"
        "**Root cause.** #412 (in 2.14.0) splits the order discount across the lines, and "
        "`allocate_discount` rounded each line's share on its own with "
        "`share.quantize(currency.quantum)`, which uses the `decimal` default, half-even. "
        "Rounded shares do not have to add up to the discount. For ord_8f3a2c91, 15% of "
        "¥13,580 is ¥2,037, but the shares 1,044 + 412.5 + 580.5 were rounded to "
        "1,044 + 412 + 580 = 2,036, so the Paylane line items summed to ¥11,544 against a "
        "total of ¥11,543 and `verify_totals` refused the order with ORD-4102. It is not "
        "specific to yen or to SPRING15: the pod log also has a GBP order a penny off, and a "
        "yen order with TEA500, a fixed ¥500 discount. Yen is probably just where the "
        "inputs hit it most often.\n\n"
        "**Fix.** `allocate_discount` now uses the largest-remainder method, so the shares "
        "add up to the discount by construction. (Switching to half-up was not enough — I "
        "tried it, and it is off by one the other way.) Checkout, refunds and the Paylane "
        "client are unchanged.\n\n"
        "**Tests.** A regression test for ord_8f3a2c91 in pricing and in checkout (through "
        "the fake gateway), and a seeded randomized test of the allocation in five "
        "currencies. The full suite passed after the fix (43 tests), and the pricing and "
        "checkout modules pass with the two tests added since.\n\n"
        "Next I'll run ruff and mypy and update the changelog."
    )
    s.user(FOLLOW_UP)
    s.act(
        "Sure. Let me look at the receipt code and the Japanese strings, and find every "
        "place that renders the discount.",
        read("orders/receipts.py"),
        read("locales/ja.json"),
        read("locales/en.json"),
        grep("割引|receipt\\.discount", "."),
    )
    s.act(
        "Found it, and it is not in the strings: the discount row formats the amount itself, "
        '`f"-{quote.discount:,.2f}"`, with two decimals and no currency, while every other '
        "row goes through `money()` (i.e. `format_money` with the receipt's locale). "
        "`receipt.discount` in ja.json is just the label 「割引（{code}）」, so the wording "
        "stays as it is. Let me reproduce with ord_8f3a2c91's cart.",
        bash(RECEIPT, OUT_RECEIPT_BEFORE, check=True),
    )
    s.act(
        "Reproduced: 「割引（SPRING15）  -2,037.00」 between rows in 円. Let me check the "
        "history of that line and the receipt tests.",
        bash("git log -L '/if quote.discount:/,+3:orders/receipts.py' --oneline", OUT_GIT_LOG_L),
        read("tests/test_receipts.py"),
    )
    s.act(
        "Are there other hand-formatted amounts like that in the code?",
        grep(r":,?\.\d+f\}", "orders"),
    )
    s.act(
        "It came in with #405 and no test covers the discount row. The fix is to format it "
        "like the other rows; `format_money` puts the minus sign in front of the currency "
        'symbol in English ("-$9.90") and in front of the number in Japanese ("-2,037円").',
        edit(
            "orders/receipts.py",
            '        rows.append((label, f"-{quote.discount:,.2f}"))\n',
            "        rows.append((label, money(-quote.discount)))\n",
        ),
    )
    s.act(
        "Now tests for the Japanese receipt (the exact line from support's screenshot, fixed) "
        "and for an English one, so the currency symbol is covered too.",
        edit(
            "tests/test_receipts.py",
            "from orders.receipts import display_width, render_receipt\n",
            "from orders.promotions import percent_off\n"
            "from orders.receipts import display_width, render_receipt\n",
        ),
        edit(
            "tests/test_receipts.py",
            '    assert display_width("割引（SPRING15）") == 16\n',
            '    assert display_width("割引（SPRING15）") == 16\n' + RECEIPT_TESTS,
        ),
    )
    s.act(
        "Rendering the receipt again:",
        bash(RECEIPT, OUT_RECEIPT_AFTER, check=True),
    )
    s.act(
        "Aligned, in yen. The receipt tests:",
        pytest(
            "python -m pytest tests/test_receipts.py",
            paths=["tests/test_receipts.py"],
            seconds="0.31",
        ),
    )
    s.act(
        "The Japanese receipt now reads 「割引（SPRING15）  -2,037円」 and the columns still "
        "line up. Let me also look at an English and a German receipt with a discount, since "
        "the same row is used for every locale.",
        bash(RECEIPTS_OTHER, OUT_RECEIPTS_OTHER, check=True),
    )
    s.act(
        '"-$9.90" and "-13,74 €" — both right. Full suite, then the linters:',
        pytest("python -m pytest", seconds="0.93"),
    )
    s.act(
        "47 passed. Now ruff and mypy, as CI runs them (`make lint`).",
        bash("ruff check orders tests", lambda w: ruff_e501(w), check=True),
        bash("mypy", "Success: no issues found in 17 source files\n"),
    )
    s.act(
        "ruff flags one line of my regression test as too long (E501); mypy is clean. "
        "I'll wrap the list.",
        edit(
            "tests/test_pricing.py",
            '    assert [line.discount for line in quote.lines] == [Decimal("1044"), '
            'Decimal("412"), Decimal("581")]\n',
            "    assert [line.discount for line in quote.lines] == [\n"
            '        Decimal("1044"),\n        Decimal("412"),\n        Decimal("581"),\n'
            "    ]\n",
        ),
    )
    s.act(
        "Re-running ruff, and updating the changelog with both fixes under Unreleased.",
        bash("ruff check orders tests", lambda w: ruff_e501(w), check=True),
        edit(
            "CHANGELOG.md",
            "# Changelog\n\nAll notable changes to orders-svc. Dates are deploy dates (JST).\n",
            CHANGELOG_ENTRY,
        ),
    )
    s.act(
        "Let me review the complete change set.",
        bash("git diff --stat", lambda w: w.git_diff_stat()),
    )
    s.act(
        "Six files, as expected. The full diff:",
        bash("git diff", lambda w: w.git_diff()),
    )
    s.act(
        "The diff contains only what I intended: the allocation, the receipt row, the tests "
        "and the changelog. The Paylane client and the locale files are untouched. Final "
        "check, lint and tests together as CI runs them:",
        bash("make lint test", lambda w: make_lint_test(w), check=True),
    )
    s.say(
        "Done. Summary:\n\n"
        "**Root cause (ORD-4102).** 2.14.0 (#412) allocates the order discount across the "
        "lines so that Paylane gets per-line totals. `allocate_discount` rounded each line's "
        "share separately with `Decimal.quantize` and no rounding mode, i.e. half-even, and "
        "separately rounded shares need not add up to the discount. For ord_8f3a2c91: 15% "
        "of ¥13,580 = ¥2,037, shares 1,044 + 412.5 + 580.5 → 1,044 + 412 + 580 = 2,036, so "
        "the line items summed to ¥11,544 vs a total of ¥11,543 and checkout refused the "
        "order before calling Paylane (no card holds). Any currency can hit it (the pod log "
        "has a GBP order off by £0.01); JPY dominates in production, most likely because the "
        "yen prices produce half-unit shares far more often than the mostly whole dollar and "
        "euro prices do.\n\n"
        "**Fix.** `orders/pricing.py`: largest-remainder allocation (round down, hand out "
        "the leftover units by largest remainder, deterministic tie-break), so the shares "
        "always add up to the discount. Rounding half-up instead is not a fix: it is off by "
        "one in the other direction (I tried it; the regression test caught it). On 20,000 "
        "random carts per currency the old code was off in 5% (JPY, KRW) to 20% (USD, EUR, "
        "GBP with arbitrary cent prices) of them, and the new code in none.\n\n"
        "**Receipts.** `orders/receipts.py` formatted the discount row as `-2,037.00`; it "
        "now uses `format_money` like the other rows (`-2,037円`, `-$9.90`, `-13,74 €`). "
        "`locales/ja.json` is unchanged.\n\n"
        "**Tests.** 5 new: ord_8f3a2c91 in pricing and through checkout with the fake "
        "gateway, a seeded randomized allocation test over USD/JPY/KRW/EUR/KWD, and "
        "ja/en receipt discount rows. `make lint test`: ruff and mypy clean, 47 passed.\n\n"
        "**Follow-ups.**\n"
        "- The 37 failed checkouts were never authorized, so nobody was charged; support "
        "may want to send those customers a retry link (`SqliteOrderStore.failures` lists "
        "them).\n"
        "- Other `.quantize()` calls without a rounding mode would be the same trap; a "
        "small lint (or a grep in CI) for `.quantize(` outside `orders/currency.py` would "
        "catch them.\n"
        "- Nothing is committed yet; tell me if you want a branch and a commit."
    )
    s.user(COMMIT_REQUEST)
    s.act(
        "Before committing, one last read of the whole of pricing.py as it will be committed.",
        read("orders/pricing.py"),
    )
    s.act(
        "Good. Creating the branch and committing the source, test and changelog changes "
        "(not the untracked log).",
        bash(
            "git checkout -b fix/ord-4102-discount-allocation",
            "Switched to a new branch 'fix/ord-4102-discount-allocation'\n",
        ),
    )
    s.act(
        "Committing with a message that explains the cause:",
        bash(
            "git add orders tests CHANGELOG.md && git commit -q -F - <<'EOF'\n"
            + COMMIT_MESSAGE
            + "\nEOF\ngit log --oneline -n 2 && git status --short",
            lambda w: commit_output(w),
        ),
    )
    s.act(
        "Checking what went into the commit:",
        bash("git show --stat HEAD", lambda w: commit_stat(w)),
    )
    s.say(
        "Committed on `fix/ord-4102-discount-allocation` (not pushed); `logs/` is left "
        "untracked.\n\n"
        "PR description:\n\n"
        "---\n"
        '**Fix ORD-4102 "total mismatch" at checkout for promotions (regression in '
        "2.14.0)**\n\n"
        "Since #412, `allocate_discount` rounded each line's share of the order discount "
        "on its own (half-even, the `decimal` default), so the shares could add up to one "
        "minor unit more or less than the discount. The Paylane line items then did not "
        "add up to the order total and `verify_totals` rejected the checkout with "
        "ORD-4102 — about 3.1% of JPY checkouts with a promo code, and occasionally other "
        "currencies.\n\n"
        "- `allocate_discount` uses the largest-remainder method: shares are rounded down "
        "and the leftover units go to the largest remainders, so they always add up to "
        "the discount.\n"
        "- Receipts format the discount row with `format_money` (`-2,037円` instead of "
        "`-2,037.00`).\n"
        "- Tests: ord_8f3a2c91 (pricing and checkout), a seeded randomized allocation "
        "test in five currencies, and ja/en receipt discount rows.\n\n"
        "No change to the Paylane client, the API or the locale strings. Orders that "
        "failed with ORD-4102 were never authorized, so there is nothing to refund.\n"
        "---"
    )


def log_volume(ws: Workspace) -> str:
    lines = [line for line in ws.files[LOG_PATH].splitlines() if "checkout started" in line]
    counts: dict[str, int] = {}
    for line in lines:
        code = re.search(r"currency=([A-Z]+)", line).group(1)  # type: ignore[union-attr]
        counts[code] = counts.get(code, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)  # sort -rn
    return f"{len(lines)}\n" + "".join(f"{n:7d} currency={code}\n" for code, n in ranked)


def ruff_e501(ws: Workspace) -> tuple[str, int]:
    hits = []
    for path in sorted(ws.files):
        if path.endswith(".py") and path.startswith(("orders/", "tests/")):
            for number, line in enumerate(ws.files[path].splitlines(), 1):
                if len(line) > 100:
                    hits.append(f"{path}:{number}:101: E501 Line too long ({len(line)} > 100)")
    if not hits:
        return "All checks passed!\n", 0
    return "\n".join(hits) + f"\nFound {len(hits)} error{'s' if len(hits) > 1 else ''}.\n", 1


def make_lint_test(ws: Workspace) -> str:
    report, _ = pytest_report(ws, seconds="0.95")
    return (
        "ruff check orders tests\nAll checks passed!\nmypy\n"
        "Success: no issues found in 17 source files\npython -m pytest\n" + report
    )


def blame_allocate(ws: Workspace) -> str:
    lines = ws.head["orders/pricing.py"].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def allocate_discount"))
    return "".join(
        f"7d3f0b8e (Priya Raman 2024-04-12 16:22:41 +0900 {n + 1:3d}) {lines[n]}\n"
        for n in range(start, start + 17)
    )


def commit_stat(ws: Workspace) -> str:
    body = "".join(f"    {line}\n" if line else "    \n" for line in COMMIT_MESSAGE.splitlines())
    return (
        "commit 3c5d9e1f4b7a20c8d6e9f1a3b5c7d9e0f2a4b6c8"
        " (HEAD -> fix/ord-4102-discount-allocation)\n"
        "Author: Kenji Watanabe <kenji.watanabe@tealeaf.example>\n"
        "Date:   Fri Apr 19 15:47:12 2024 +0900\n\n" + body + "\n" + ws.git_diff_stat()
    )


def commit_output(ws: Workspace) -> str:
    changed = len(ws.changed())
    diff = ws.git_diff().splitlines()
    ins = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
    dels = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
    assert changed == 6 and ins > 100, (changed, ins, dels)
    return (
        "3c5d9e1 (HEAD -> fix/ord-4102-discount-allocation) pricing: allocate discounts by "
        "largest remainder so line items add up (ORD-4102)\n"
        "a41c9e2 (tag: v2.14.0, origin/main, origin/HEAD, main) release: v2.14.0\n"
        "?? logs/\n"
    )


# --------------------------------------------------------------------------------------
# Anthropic Messages format.
# --------------------------------------------------------------------------------------


def to_anthropic(messages: list[dict[str, object]], errors: set[str]) -> dict[str, object]:
    """``{"system", "messages"}``: tool_use blocks in the assistant turn, and every result
    of a batch as tool_result blocks in the one user turn that follows it."""
    system = messages[0]["content"]
    turns: list[dict[str, object]] = []

    def add(role: str, blocks: list[dict[str, object]]) -> None:
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)  # type: ignore[union-attr]
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages[1:]:
        role, content = message["role"], message.get("content")
        if role == "user":
            add("user", [{"type": "text", "text": content}])
        elif role == "assistant":
            blocks: list[dict[str, object]] = []
            if content:
                blocks.append({"type": "text", "text": content})
            for call in message.get("tool_calls", []):  # type: ignore[union-attr]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "input": json.loads(call["function"]["arguments"]),
                    }
                )
            add("assistant", blocks)
        elif role == "tool":
            block: dict[str, object] = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": content,
            }
            if message["tool_call_id"] in errors:
                block["is_error"] = True
            add("user", [block])
    for turn in turns:  # a lone text block reads better as a plain string
        blocks = turn["content"]
        if len(blocks) == 1 and blocks[0]["type"] == "text":  # type: ignore[index]
            turn["content"] = blocks[0]["text"]  # type: ignore[index]
    return {"system": system, "messages": turns}


# --------------------------------------------------------------------------------------
# Checks: the properties the brief for this example asks for.
# --------------------------------------------------------------------------------------

ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]+$")


def check_openai(messages: list[dict[str, object]]) -> dict[str, int]:
    assert messages[0]["role"] == "system"
    assert messages[1]["role"] == "user", "the first non-system message is from the user"
    ids: set[str] = set()
    i, batches, parallel = 1, 0, 0
    previous = "system"
    while i < len(messages):
        message = messages[i]
        role = message["role"]
        assert role in ("user", "assistant", "tool"), role
        if role in ("user", "assistant"):
            assert previous != role, f"two {role} messages in a row at {i}"
        if role == "tool":
            raise AssertionError(f"tool message at {i} does not follow its call")
        previous = role
        calls = message.get("tool_calls") or []
        i += 1
        if not calls:
            assert isinstance(message["content"], str) and message["content"].strip()
            continue
        batches += 1
        parallel += len(calls) > 1
        assert len(calls) <= 4
        for call in calls:
            call_id = call["id"]
            assert ID_PATTERN.match(call_id) and call_id not in ids, call_id
            ids.add(call_id)
            assert call["type"] == "function"
            assert isinstance(json.loads(call["function"]["arguments"]), dict)
            result = messages[i]
            assert result["role"] == "tool" and result["tool_call_id"] == call_id, (i, call_id)
            assert isinstance(result["content"], str) and result["content"]
            i += 1
        previous = "tool"
    return {"tool_calls": len(ids), "batches": batches, "parallel_batches": parallel}


def check_anthropic(doc: dict[str, object], calls: int) -> None:
    turns = doc["messages"]
    assert isinstance(doc["system"], str)
    assert turns[0]["role"] == "user"
    pending: list[str] = []
    seen = 0
    for n, turn in enumerate(turns):
        assert turn["role"] == ("user" if n % 2 == 0 else "assistant"), n
        blocks = turn["content"] if isinstance(turn["content"], list) else []
        if turn["role"] == "user":
            results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            assert results == pending, (n, results, pending)
            if results:
                assert blocks[: len(results)] == [b for b in blocks if b["type"] == "tool_result"]
            pending = []
        else:
            assert not pending
            pending = [b["id"] for b in blocks if b["type"] == "tool_use"]
            seen += len(pending)
    assert not pending and seen == calls


def has_cjk(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in text)


def summary(messages: list[dict[str, object]], stats: dict[str, int]) -> dict[str, object]:
    def size(message: dict[str, object]) -> int:
        total = len(message.get("content") or "")  # type: ignore[arg-type]
        for call in message.get("tool_calls") or []:  # type: ignore[union-attr]
            total += len(call["function"]["name"]) + len(call["function"]["arguments"])
        return total

    chars = sum(size(m) for m in messages)
    tool_outputs = [m["content"] for m in messages if m["role"] == "tool"]
    contents = [m["content"] for m in messages if isinstance(m.get("content"), str)]
    return {
        "messages": len(messages),
        "by_role": {
            r: sum(m["role"] == r for m in messages)
            for r in ("system", "user", "assistant", "tool")
        },
        **stats,
        "characters": chars,
        "approx_tokens": chars // 4,
        "longest_tool_output": max(len(t) for t in tool_outputs),  # type: ignore[arg-type]
        "repeated_tool_outputs": len(tool_outputs) - len(set(tool_outputs)),
        "messages_with_cjk": sum(has_cjk(c) for c in contents),  # type: ignore[arg-type]
    }


# --------------------------------------------------------------------------------------


def build(
    materialize: Path | None = None,
) -> tuple[list[dict[str, object]], dict[str, object], Session]:
    log, stats = build_log(random.Random(f"{SEED}:log"))
    ws = Workspace({**FILES, LOG_PATH: log})
    session = Session(ws, random.Random(f"{SEED}:ids"), materialize)
    story(session, stats)
    return session.messages, to_anthropic(session.messages, session.errors), session


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output directory")
    parser.add_argument(
        "--materialize",
        type=Path,
        help="also write the repository as it stood before each re-checkable command, with "
        "the command and its simulated output in manifest.json",
    )
    args = parser.parse_args()
    messages, anthropic, session = build(args.materialize)
    stats = check_openai(messages)
    check_anthropic(anthropic, stats["tool_calls"])
    report = summary(messages, stats)
    assert 150 <= report["messages"] <= 250, report
    assert 60_000 <= report["approx_tokens"] <= 150_000, report
    assert report["longest_tool_output"] >= 20_000 and report["repeated_tool_outputs"] >= 1
    assert report["messages_with_cjk"] >= 1 and report["parallel_batches"] >= 5
    for name, doc in (("session.json", messages), ("session_anthropic.json", anthropic)):
        text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
        (args.out / name).write_text(text, encoding="utf-8")
    if args.materialize:
        (args.materialize / "manifest.json").write_text(
            json.dumps(session.checks, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
