"""The live page at ``/condense/``, in a real headless Chromium (driven by Playwright).

The browser is the system's Chromium (Debian package ``chromium``); Playwright's own
browser download is never used. Without a Chromium this test is skipped on a developer's
machine and fails under CI (``CI`` set), where ``.ci/run`` must install it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from condense.testing import StrictProvider
from condense.testing.sessions import synthetic_session
from proxy_support import RunningProxy, running_proxy

_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    found = os.environ.get("CONDENSE_CHROMIUM") or next(
        (path for name in _BROWSERS if (path := shutil.which(name))), None
    )
    if found:
        return found
    message = "no Chromium found: apt-get install -y chromium (or set CONDENSE_CHROMIUM)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningProxy]:
    """A proxy that has seen an untouched, a repaired, a compressed and a retried request."""
    with StrictProvider("openai", context_window=1500) as upstream:
        root = upstream.base_url.removesuffix("/v1")
        config = {
            "upstream": [
                {"url": root, "models": ["small-*"], "context_window": 1500},
                {"url": root},
            ]
        }
        tmp = tmp_path_factory.mktemp("page")
        with running_proxy([], tmp, config=config) as proxy:
            client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="k", max_retries=0)
            ask = {"role": "user", "content": "hi"}
            client.chat.completions.create(model="m", messages=[ask])
            orphan = {"role": "tool", "tool_call_id": "call_1", "content": "x"}
            client.chat.completions.create(model="m", messages=[ask, orphan])
            long = [*synthetic_session(40, output_chars=300, parallel=False), ask]
            client.chat.completions.create(model="small-model", messages=long)
            client.chat.completions.create(model="unknown-model", messages=long)  # overflow
            client.close()
            proxy.wait_for_log(4)
            yield proxy


def test_live_page_lists_requests_with_what_was_done(scene: RunningProxy, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 700})
            page.goto(f"{scene.url}/condense/")
            page.wait_for_selector("body[data-loaded=true]")
            rows = page.locator("#requests tbody tr")
            assert rows.count() == 4
            texts = [rows.nth(i).inner_text() for i in range(4)]  # newest first
            retried, compressed, repaired, untouched = texts
            assert "retried" in retried and "context_overflow" in retried
            assert "compressed" in compressed and "small-model" in compressed
            assert "repaired 1" in repaired and "untouched" not in repaired
            assert "untouched" in untouched and "200" in untouched
            bar = rows.nth(1).locator(".bar")
            before = bar.locator(".before").evaluate("e => e.getBoundingClientRect().width")
            after = bar.locator(".after").evaluate("e => e.getBoundingClientRect().width")
            assert 0 < after < before  # the token bar shows the cut
            assert "→" in rows.nth(1).locator(".tokens").inner_text()
            page.screenshot(path=str(tmp_path / "condense-page.png"), full_page=True)

            client = openai.OpenAI(base_url=f"{scene.url}/v1", api_key="k", max_retries=0)
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "live?"}]
            )
            client.close()
            page.wait_for_function("document.querySelectorAll('#requests tbody tr').length == 5")
            assert "4 recent" not in page.inner_text("#summary")
        finally:
            browser.close()
