"""What images and documents cost, the way each provider bills them.

Providers do not tokenize an image or a PDF as text: they bill it by its pixel size or
its pages. A counter therefore takes a *media policy*, one of ``MEDIA_POLICIES``; the
default is ``"openai"``. The rules (from each provider's documentation):

- ``openai`` — an image fits in 2048×2048, then its shorter side is scaled down to 768
  (never up); it costs 85 + 170 per 512-pixel tile. ``detail: "low"`` costs 85.
- ``anthropic`` — an image is scaled down until its long edge is at most 1568 pixels
  and it costs at most about 1,600 tokens (1.2 megapixels); it costs
  ``ceil(width × height / 750)``. ``detail`` is ignored.
- ``gemini`` — an image with both sides ≤ 384 pixels costs 258; a larger one 258 per
  768×768 tile (``ceil(width / 768) × ceil(height / 768)`` tiles). ``detail`` is ignored.

These are the documented rules of the classic vision models. Per-model variants are
not modelled: OpenAI models that bill 32-pixel patches (``gpt-4.1-mini``, ``o4-mini``,
…) or a different tile price (``gpt-4o-mini``), Claude models that read larger images,
Gemini 3's ``media_resolution`` budgets (1,120 tokens per image by default). A provider
module that needs them can add a policy here.

The size is read from the image's own header (PNG, JPEG, GIF, WebP; see ``sniff``).
An image whose bytes are not in the message (an ``https://`` URL, a file id) or whose
header cannot be read costs ``remote_image``: the most one image can cost under the
``openai`` (1,445: 8 tiles) and ``anthropic`` (1,600) rules, and for ``gemini``, whose
tile rule has no maximum, the 1,120 tokens Gemini 3 spends on an image by default.

A base64 PDF (an Anthropic ``document`` block, an OpenAI ``file`` or ``input_file``
part) costs its pages (counted in its bytes, see ``sniff.pdf_pages``) times
``pdf_page``. OpenAI and Anthropic put both the text and an image of each page into the
context, so a page costs an image plus 1,500 tokens of text (the low end of the
1,500–3,000 tokens per page that Anthropic's PDF guide quotes for text):
``openai`` 765 + 1,500 = 2,265 (a portrait page at high detail is 4 tiles) and
``anthropic`` 1,600 + 1,500 = 3,100. Gemini documents 258 tokens per page and Gemini 3
560 by default; ``gemini`` uses 560. A document condense cannot see (a URL or file id)
is assumed to have ``REMOTE_DOCUMENT_PAGES`` (10) pages; a plain-text document counts
as its text.

Reading a header or counting pages decodes base64, so results are remembered per
payload string (by its hash and length, a bounded table holding no reference to it):
counting the same history again never decodes the same image or PDF twice.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from condense.exceptions import UnknownNameError
from condense.tokens.sniff import (
    BYTES_PER_PAGE,
    decode_base64,
    decode_head,
    image_size,
    pdf_pages,
)

__all__ = [
    "DEFAULT_MEDIA",
    "DOCUMENT_PARTS",
    "IMAGE_PARTS",
    "LOW_DETAIL_IMAGE_TOKENS",
    "MEDIA_POLICIES",
    "REMOTE_DOCUMENT_PAGES",
    "Billing",
    "Media",
    "billing",
    "document_tokens",
    "image_tokens",
]

IMAGE_PARTS = frozenset({"image_url", "input_image", "image"})
"""The content parts that are images: OpenAI chat ``image_url``, Responses
``input_image``, Anthropic ``image``. No other part is one: server tool and MCP blocks,
documents, search results, compaction and any type condense does not know are not."""
DOCUMENT_PARTS = frozenset({"document", "file", "input_file"})
"""The content parts that are documents: Anthropic ``document``, OpenAI ``file``,
Responses ``input_file``."""

Media = Literal["openai", "anthropic", "gemini"]
MEDIA_POLICIES: tuple[Media, ...] = ("openai", "anthropic", "gemini")
DEFAULT_MEDIA: Media = "openai"
LOW_DETAIL_IMAGE_TOKENS = 85
REMOTE_DOCUMENT_PAGES = 10
_MEMO_SIZE = 4096
_PDF_MAGIC_WITHIN = 1024  # the PDF header may follow some junk bytes


def _openai_image(width: int, height: int) -> int:
    scale = min(1.0, 2048 / max(width, height))
    width_, height_ = width * scale, height * scale
    scale = min(1.0, 768 / min(width_, height_))
    tiles = math.ceil(width_ * scale / 512) * math.ceil(height_ * scale / 512)
    return 85 + 170 * tiles


def _anthropic_image(width: int, height: int) -> int:
    scale = min(1.0, 1568 / max(width, height))
    return min(1600, math.ceil(width * height * scale * scale / 750))


def _gemini_image(width: int, height: int) -> int:
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


@dataclass(frozen=True, kw_only=True)
class Billing:
    """How one provider bills media (see the module docstring for the numbers)."""

    name: Media
    image: Callable[[int, int], int]
    """Tokens of an image of the given width and height (at full detail)."""
    low_detail_image: int | None
    """Tokens of an image sent with ``detail: "low"``; ``None`` if ``detail`` is ignored."""
    remote_image: int
    """Tokens of an image whose size cannot be read."""
    pdf_page: int
    """Tokens per page of a PDF."""

    @property
    def remote_document(self) -> int:
        """Tokens of a document whose bytes are not in the message."""
        return REMOTE_DOCUMENT_PAGES * self.pdf_page


_BILLING: dict[str, Billing] = {
    "openai": Billing(
        name="openai",
        image=_openai_image,
        low_detail_image=LOW_DETAIL_IMAGE_TOKENS,
        remote_image=1445,
        pdf_page=765 + 1500,
    ),
    "anthropic": Billing(
        name="anthropic",
        image=_anthropic_image,
        low_detail_image=None,
        remote_image=1600,
        pdf_page=1600 + 1500,
    ),
    "gemini": Billing(
        name="gemini", image=_gemini_image, low_detail_image=None, remote_image=1120, pdf_page=560
    ),
}


def billing(media: str) -> Billing:
    """Return the ``Billing`` of the media policy ``media``, one of ``MEDIA_POLICIES``."""
    try:
        return _BILLING[media]
    except (KeyError, TypeError):
        raise UnknownNameError("media policy", str(media), MEDIA_POLICIES) from None


def image_tokens(source: object, rules: Billing, *, detail: object = None) -> int:
    """Tokens of one image. ``source`` is a ``data:`` URL, or the bare base64 of an
    Anthropic ``base64`` source, or anything else (a URL, ``None``) for an image whose
    bytes are not in the message."""
    if detail == "low" and rules.low_detail_image is not None:
        return rules.low_detail_image
    size = _image_size(source) if type(source) is str else None
    return rules.remote_image if size is None else rules.image(*size)


def document_tokens(data: object, rules: Billing, *, media_type: object = None) -> int | str:
    """Tokens of one embedded document, or its text when it is a plain-text document.

    ``data`` is a ``data:`` URL or bare base64 (anything else: a document condense cannot
    see). A PDF costs its pages times ``rules.pdf_page``; a ``text/*`` document is
    returned decoded, to be counted as text; any other file costs as many pages as its
    size suggests (``sniff.BYTES_PER_PAGE``).
    """
    if type(data) is not str:
        return rules.remote_document
    declared, payload, is_base64 = _split_data_url(data)
    kind = declared or (media_type.lower() if isinstance(media_type, str) else "")
    if kind.startswith("text/"):
        if not is_base64:
            return unquote(payload)
        decoded = decode_base64(payload)
        if decoded is not None:
            return decoded.decode("utf-8", "replace")
    return rules.pdf_page * _pages(data)


# --- measuring, remembered per payload ---------------------------------------------------

_memo: OrderedDict[tuple[str, int, int], tuple[int, int] | int | None] = OrderedDict()
_memo_lock = threading.Lock()


def _remembered(
    kind: str, text: str, measure: Callable[[str], tuple[int, int] | int | None]
) -> tuple[int, int] | int | None:
    key = (kind, hash(text), len(text))  # a str caches its hash: O(1) after the first time
    with _memo_lock:
        if key in _memo:
            _memo.move_to_end(key)
            return _memo[key]
    result = measure(text)
    with _memo_lock:
        _memo[key] = result
        while len(_memo) > _MEMO_SIZE:
            _memo.popitem(last=False)
    return result


def _image_size(source: str) -> tuple[int, int] | None:
    if source.startswith(("http://", "https://", "file-", "gs://")):
        return None  # the image is not in the message
    size = _remembered("image", source, _measure_image)
    return size if isinstance(size, tuple) else None


def _measure_image(source: str) -> tuple[int, int] | None:
    return image_size(_split_data_url(source)[1])


def _pages(data: str) -> int:
    pages = _remembered("pages", data, _count_pages)
    return pages if isinstance(pages, int) else 1


def _count_pages(data: str) -> int:
    payload = _split_data_url(data)[1]
    if b"%PDF" not in decode_head(payload, _PDF_MAGIC_WITHIN):
        return max(1, -(-len(payload) * 3 // 4 // BYTES_PER_PAGE))
    decoded = decode_base64(payload)
    return 1 if decoded is None else pdf_pages(decoded)


def _split_data_url(text: str) -> tuple[str, str, bool]:
    """``(media type, payload, is base64)`` of a ``data:`` URL, else ``("", text, True)``:
    bare text is taken for base64."""
    if not text.startswith("data:"):
        return "", text, True
    comma = text.find(",", 5, 512)
    if comma < 0:
        return "", text, True
    header = text[5:comma].lower()
    return header.split(";", 1)[0].strip(), text[comma + 1 :], ";base64" in header
