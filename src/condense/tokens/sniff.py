"""What an embedded file is, read from its first bytes: image sizes and PDF page counts.

No imaging or PDF library is used; everything is read from the bytes, which arrive as
base64 text (a data URL's payload or an Anthropic ``source.data``):

- :func:`image_size` reads width and height from a PNG (``IHDR``), GIF (logical screen),
  WebP (``VP8 ``, ``VP8L`` or ``VP8X`` chunk) or JPEG (the first ``SOFn`` segment,
  skipping every segment before it by its length) header. EXIF rotation is ignored;
  for the tile formulas a swapped width and height changes at most a rounding.
- :func:`pdf_pages` counts the page objects (``/Type /Page``, not ``/Pages``) of a PDF;
  when a PDF keeps its objects in compressed object streams (``/ObjStm``, PDF 1.5+),
  those streams are inflated and counted too (at most ``_INFLATE_LIMIT`` bytes, so a
  compression bomb costs nothing). With no page object found, the largest ``/Count``
  of a page tree is used, and as a last resort the size: one page per
  ``BYTES_PER_PAGE`` bytes.
- :func:`decode_base64` and :func:`decode_head` decode all or the start of base64 text
  leniently (whitespace and line breaks are allowed, as in MIME); they never raise.

Every function takes untrusted input and returns ``None`` (or a size-based guess for
pages) rather than raising.
"""

from __future__ import annotations

import binascii
import re
import struct
import zlib

__all__ = [
    "BYTES_PER_PAGE",
    "decode_base64",
    "decode_head",
    "image_size",
    "pdf_pages",
]

BYTES_PER_PAGE = 50_000
"""Bytes per page assumed for a PDF whose page objects cannot be found."""

_INFLATE_LIMIT = 64 << 20  # bytes of object streams inflated per PDF, at most
_JPEG_HEADS = (1 << 16, 1 << 20)  # decoded prefix sizes tried before the whole JPEG
_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_COUNT = re.compile(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b")
_OBJECT_STREAM = re.compile(rb"/Type\s*/ObjStm\b")
_STREAM = re.compile(rb"stream\r?\n")
_WHITESPACE = re.compile(r"\s+")
# JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic): not the
# DHT (C4), JPG (C8) and DAC (CC) markers that share the range.
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD9)})  # markers without a length


def decode_base64(text: str) -> bytes | None:
    """Decode base64 ``text`` (whitespace allowed); ``None`` if it is not base64."""
    try:
        return binascii.a2b_base64(text)  # lenient: skips whitespace and stray characters
    except (binascii.Error, ValueError):
        return None


def decode_head(text: str, size: int) -> bytes:
    """Decode the first ``size`` bytes of base64 ``text``: exactly ``size`` bytes unless
    ``text`` holds fewer (or is not base64). Costs O(``size``), however long ``text`` is."""
    needed = (size + 2) // 3 * 4
    taken = needed
    chars = _clean(text[:taken])
    while len(chars) < needed and taken < len(text):  # line breaks took some of the slice
        taken *= 2
        chars = _clean(text[:taken])
    chars = chars[: min(needed, len(chars) // 4 * 4)]
    try:
        return binascii.a2b_base64(chars)[:size]
    except (binascii.Error, ValueError):
        return b""


def image_size(text: str) -> tuple[int, int] | None:
    """Return ``(width, height)`` of the PNG, GIF, WebP or JPEG image in base64 ``text``,
    or ``None`` if it is none of these or its header is damaged."""
    head = decode_head(text, 32)
    if head.startswith(b"\xff\xd8"):
        return _jpeg(text)
    size = _png(head) or _gif(head) or _webp(head)
    return size if size is not None and size[0] > 0 and size[1] > 0 else None


def pdf_pages(data: bytes) -> int:
    """Return the number of pages of the PDF ``data`` (see the module docstring)."""
    pages = len(_PAGE.findall(data))
    if not pages:
        pages = sum(len(_PAGE.findall(stream)) for stream in _object_streams(data))
    if not pages:
        counts = [int(a or b) for a, b in _COUNT.findall(data)]
        pages = max(counts, default=0)
    return pages if pages > 0 else max(1, -(-len(data) // BYTES_PER_PAGE))


def _clean(text: str) -> str:
    return _WHITESPACE.sub("", text) if _WHITESPACE.search(text) else text


def _png(head: bytes) -> tuple[int, int] | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    return None


def _gif(head: bytes) -> tuple[int, int] | None:
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    return None


def _webp(head: bytes) -> tuple[int, int] | None:
    if head[:4] != b"RIFF" or head[8:12] != b"WEBP" or len(head) < 30:
        return None
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and head[20] == 0x2F:
        (bits,) = struct.unpack("<I", head[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return width, height
    return None


def _jpeg(text: str) -> tuple[int, int] | None:
    for size in _JPEG_HEADS:
        head = decode_head(text, size)
        found = _jpeg_frame(head)
        if found is not None or len(head) < size:  # found, or the whole file was read
            return found
    data = decode_base64(text)
    return None if data is None else _jpeg_frame(data)


def _jpeg_frame(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments up to the first start-of-frame and read its size."""
    position, end = 2, len(data)
    while position + 4 <= end:
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in _STANDALONE:
            position += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame before them
            return None
        if marker in _SOF:
            if position + 9 > end:
                return None
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return (width, height) if width and height else None
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        position += 2 + length
    return None


def _object_streams(data: bytes) -> list[bytes]:
    """Inflate the compressed object streams of a PDF, ``_INFLATE_LIMIT`` bytes in all."""
    streams: list[bytes] = []
    budget = _INFLATE_LIMIT
    for found in _OBJECT_STREAM.finditer(data):
        start = _STREAM.search(data, found.end())
        if start is None:
            break
        stop = data.find(b"endstream", start.end())
        if stop < 0:
            stop = len(data)
        try:
            inflated = zlib.decompressobj().decompress(data[start.end() : stop], budget)
        except zlib.error:
            continue
        streams.append(inflated)
        budget -= len(inflated)
        if budget <= 0:
            break
    return streams
