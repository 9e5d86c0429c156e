"""condense.tokens: images and documents cost what their provider bills, by size and pages.

Every image and PDF here is written byte by byte from its format's specification (zlib
for PNG data and CRCs), so the headers condense reads are real ones; nothing imaging- or
PDF-related is imported.
"""

from __future__ import annotations

import base64
import random
import struct
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense.exceptions import UnknownNameError
from condense.formats import from_anthropic, from_responses
from condense.tokens import (
    MEDIA_POLICIES,
    TokenCounter,
    count_message,
    count_text,
    count_tokens,
    estimate_message,
    estimate_tokens,
    quick_estimate,
    upper_bound_message,
    upper_bound_tokens,
)
from condense.tokens import media as media_module
from condense.tokens.counting import shared_counter
from condense.tokens.media import REMOTE_DOCUMENT_PAGES, billing
from condense.tokens.pieces import MEDIA_PART_TOKENS, TOKENS_PER_MESSAGE
from condense.tokens.sniff import BYTES_PER_PAGE, decode_head, image_size, pdf_pages
from profiles import examples

# ---------------------------------------------------------------------------------------
# Files written from their specifications
# ---------------------------------------------------------------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, *, pixels: bool = True, noise: bool = False) -> bytes:
    """A PNG (8-bit grayscale). With ``pixels`` it is a complete, valid image (black, or
    random ``noise``, which does not compress: a realistic size); without, the image data
    is one empty row (for sizes too large to fill)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rng = random.Random(width * height)
    row = (lambda: rng.randbytes(width)) if noise else (lambda: bytes(width))
    rows = b"".join(b"\x00" + row() for _ in range(height)) if pixels else b"\x00"
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 9))
        + _chunk(b"IEND", b"")
    )


def gif(width: int, height: int) -> bytes:
    """A GIF89a: a logical screen of ``width``×``height`` holding one 1×1 image."""
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    return b"GIF89a" + screen + image + b"\x3b"


def webp(width: int, height: int, kind: str) -> bytes:
    """A WebP header of the lossy (``VP8 ``), lossless (``VP8L``) or extended (``VP8X``)
    kind, followed by a few bytes of (meaningless) image data."""
    if kind == "VP8 ":
        frame_tag = bytes([0x10, 0x02, 0x00])  # key frame, version 0, shown
        body = frame_tag + b"\x9d\x01\x2a" + struct.pack("<HH", width, height) + bytes(8)
    elif kind == "VP8L":
        bits = (width - 1) | (height - 1) << 14
        body = b"\x2f" + struct.pack("<I", bits) + bytes(8)
    else:
        body = b"\x10\x00\x00\x00" + (width - 1).to_bytes(3, "little")
        body += (height - 1).to_bytes(3, "little")
    chunk = kind.encode() + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def jpeg(width: int, height: int, *, padding: int = 0, marker: int = 0xC0) -> bytes:
    """A baseline (``0xC0``) or progressive (``0xC2``) JPEG header: JFIF, ``padding``
    bytes of APP1 segments (EXIF data sits there), quantization and Huffman tables (the
    DHT marker 0xC4 lies in the SOF range and must be skipped), the frame, a scan."""
    rng = random.Random(width * 7 + height)
    out = (
        b"\xff\xd8\xff\xe0"
        + struct.pack(">H", 16)
        + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    )
    while padding > 0:
        size = min(padding, 65533)
        out += b"\xff\xe1" + struct.pack(">H", size + 2) + rng.randbytes(size)
        padding -= size
    out += b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes(range(1, 65))
    out += b"\xff\xc4" + struct.pack(">H", 31) + b"\x00" + bytes(16) + bytes(12)
    out += b"\xff" + bytes([marker]) + struct.pack(">HBHHB", 17, 8, height, width, 3)
    out += b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    out += b"\xff\xda" + struct.pack(">HB", 12, 3) + b"\x01\x00\x02\x11\x03\x11\x00\x3f\x00"
    return out + rng.randbytes(256).replace(b"\xff", b"\x00") + b"\xff\xd9"


def pdf(pages: int, *, filler: int = 0, compact: bool = False) -> bytes:
    """A PDF with ``pages`` pages and a correct cross-reference table. Each page's
    content stream holds ``filler // pages`` random bytes (a scanned page, say).
    ``compact`` writes ``/Type/Page`` without a space, as some producers do."""
    rng = random.Random(pages)
    space = "" if compact else " "
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type%s/Pages /Kids [%s] /Count %d >>"
        % (space.encode(), " ".join(f"{3 + 2 * i} 0 R" for i in range(pages)).encode(), pages),
    ]
    for i in range(pages):
        objects.append(
            b"<< /Type%s/Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R >>"
            % (space.encode(), 4 + 2 * i)
        )
        data = rng.randbytes(filler // pages)
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(data), data))
    return _pdf_file(objects)


def pdf_with_object_stream(pages: int) -> bytes:
    """A PDF 1.5 whose page tree lives in a compressed object stream (``/ObjStm``), so
    no ``/Type /Page`` appears in the file's bytes."""
    inner = [b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b"", pages)]
    inner += [b"<< /Type /Page /Parent 2 0 R >>" for _ in range(pages)]
    offsets, body = [], b""
    for number, text in enumerate(inner, start=2):
        offsets.append(b"%d %d" % (number, len(body)))
        body += text + b"\n"
    head = b" ".join(offsets) + b"\n"
    packed = zlib.compress(head + body)
    stream = b"<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\nstream\n" % (
        len(inner),
        len(head),
        len(packed),
    )
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", stream + packed + b"\nendstream"]
    return _pdf_file(objects, version=b"1.5")


def _pdf_file(objects: list[bytes], *, version: bytes = b"1.4") -> bytes:
    out = b"%PDF-" + version + b"\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for number, text in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, text)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return out


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def data_url(data: bytes, media_type: str) -> str:
    return f"data:{media_type};base64,{b64(data)}"


def image_message(url: str, **image: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url, **image}}]}


def one_part(message: dict[str, Any], media: str = "openai") -> int:
    """Tokens of a user message's parts: the message minus its framing and role."""
    return count_message(message, media=media) - TOKENS_PER_MESSAGE - count_text("user")


# ---------------------------------------------------------------------------------------
# Reading image headers
# ---------------------------------------------------------------------------------------

sides = st.integers(min_value=1, max_value=16383)


@given(width=sides, height=sides)
@settings(max_examples=examples(60), deadline=None)
def test_image_sizes_are_read_from_headers(width: int, height: int) -> None:
    assert image_size(b64(png(width, height, pixels=False))) == (width, height)
    assert image_size(b64(gif(width, height))) == (width, height)
    for kind in ("VP8 ", "VP8L", "VP8X"):
        assert image_size(b64(webp(width, height, kind))) == (width, height), kind
    assert image_size(b64(jpeg(width, height))) == (width, height)
    assert image_size(b64(jpeg(width, height, marker=0xC2))) == (width, height)


def test_complete_images_and_large_headers() -> None:
    assert image_size(b64(png(640, 480))) == (640, 480)
    assert image_size(b64(png(70_000, 3, pixels=False))) == (70_000, 3)
    assert image_size(b64(webp(20_000, 3, "VP8X"))) == (20_000, 3)
    assert image_size(b64(gif(65_535, 1))) == (65_535, 1)
    # The frame comes after 200 kB of EXIF-like segments: read past the first prefixes.
    assert image_size(b64(jpeg(4032, 3024, padding=200_000))) == (4032, 3024)


def test_base64_with_line_breaks_is_read() -> None:
    mime = base64.encodebytes(jpeg(1920, 1080, padding=70_000)).decode()  # 76-char lines
    assert "\n" in mime
    assert image_size(mime) == (1920, 1080)
    assert image_size(base64.encodebytes(png(33, 44)).decode()) == (33, 44)
    assert len(decode_head(mime, 1000)) == 1000


@given(data=st.binary(max_size=300), prefix=st.sampled_from([b"", b"\xff\xd8", b"RIFF", b"GIF8"]))
@settings(max_examples=examples(200), deadline=None)
def test_damaged_headers_are_none_never_an_error(data: bytes, prefix: bytes) -> None:
    size = image_size(b64(prefix + data))
    assert size is None or (size[0] > 0 and size[1] > 0)
    assert pdf_pages(b"%PDF-1.4\n" + data) >= 1


def test_truncated_and_false_headers() -> None:
    assert image_size(b64(jpeg(100, 80)[:40])) is None  # cut before the frame
    assert image_size(b64(png(10, 10)[:20])) is None
    assert image_size(b64(b"\xff\xd8\xff\xda" + bytes(100))) is None  # a scan, no frame
    assert image_size(b64(png(0, 5, pixels=False))) is None
    assert image_size("not base64 at all!") is None
    assert image_size("") is None


# ---------------------------------------------------------------------------------------
# What an image costs under each policy
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "openai", "anthropic", "gemini"),
    [
        # OpenAI's documented examples: 1024² → 768² → 4 tiles; 2048×4096 → 768×1536 → 6.
        (1024, 1024, 765, 1399, 1032),
        (2048, 4096, 1105, 1600, 258 * 3 * 6),
        (100, 100, 255, 14, 258),
        (384, 384, 255, 197, 258),
        (385, 100, 255, 52, 258),
        # Anthropic's documented examples: 1000² ≈ 1,334; 1092² ≈ 1,590 (no resize).
        (1000, 1000, 765, 1334, 1032),
        (1092, 1092, 765, 1590, 1032),
        (1920, 1080, 1105, 1600, 1548),  # a screenshot
        (4032, 3024, 765, 1600, 258 * 6 * 4),  # a phone photo
        (2048, 768, 1445, 1230, 258 * 3 * 1),  # the most tiles OpenAI's rule allows
        (1568, 200, 765, 419, 258 * 3),
    ],
)
def test_image_cost_per_policy(
    width: int, height: int, openai: int, anthropic: int, gemini: int
) -> None:
    assert billing("openai").image(width, height) == openai
    assert billing("anthropic").image(width, height) == anthropic
    assert billing("gemini").image(width, height) == gemini
    message = image_message(data_url(png(width, height, pixels=False), "image/png"))
    assert [one_part(message, media) for media in MEDIA_POLICIES] == [openai, anthropic, gemini]


@given(width=st.integers(1, 20_000), height=st.integers(1, 20_000))
@settings(max_examples=examples(300), deadline=None)
def test_remote_default_is_the_most_an_image_costs(width: int, height: int) -> None:
    for media in ("openai", "anthropic"):
        rules = billing(media)
        assert 0 < rules.image(width, height) <= rules.remote_image
    assert billing("gemini").image(width, height) >= 258


def test_every_image_format_and_part_shape_is_measured() -> None:
    expected = billing("openai").image(1600, 900)
    images = {
        "image/png": png(1600, 900, pixels=False),
        "image/gif": gif(1600, 900),
        "image/webp": webp(1600, 900, "VP8X"),
        "image/jpeg": jpeg(1600, 900),
    }
    for media_type, data in images.items():
        url = data_url(data, media_type)
        anthropic_block = {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": b64(data)},
        }
        shapes = [
            {"type": "image_url", "image_url": {"url": url}},
            {"type": "image_url", "image_url": url},  # a bare string, as some clients send
            {"type": "input_image", "image_url": url},  # a Responses part, unconverted
            anthropic_block,  # an Anthropic block carried as is (e.g. in a tool result)
        ]
        for part in shapes:
            assert one_part({"role": "user", "content": [part]}) == expected, (media_type, part)


def test_detail_low_is_openai_only() -> None:
    url = data_url(png(3000, 3000, pixels=False), "image/png")
    low = image_message(url, detail="low")
    assert one_part(low, "openai") == 85
    assert one_part(low, "anthropic") == one_part(image_message(url), "anthropic") == 1600
    assert one_part(image_message("https://example.com/a.png", detail="low")) == 85
    responses_low = {
        "role": "user",
        "content": [{"type": "input_image", "image_url": url, "detail": "low"}],
    }
    assert one_part(responses_low) == 85
    assert one_part(image_message(url, detail="auto")) == billing("openai").image(3000, 3000)


@pytest.mark.parametrize("media", MEDIA_POLICIES)
def test_images_without_readable_bytes_cost_the_remote_default(media: str) -> None:
    remote = billing(media).remote_image
    parts = [
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": data_url(b"\x00" * 64, "image/png")}},
        {"type": "input_image", "file_id": "file-abc123"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "image", "source": {"type": "file", "file_id": "file_011"}},
        {"type": "image"},
    ]
    for part in parts:
        assert one_part({"role": "user", "content": [part]}, media) == remote, part


def test_anthropic_images_in_tool_results_are_measured() -> None:
    screenshot = b64(png(1280, 800, noise=True))
    native = {
        "messages": [
            {"role": "user", "content": "Take a screenshot."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "shot", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": screenshot,
                                },
                            }
                        ],
                    }
                ],
            },
        ]
    }
    messages = from_anthropic(native)
    tool = next(m for m in messages if m["role"] == "tool")
    image_cost = billing("anthropic").image(1280, 800)
    framing = count_message({**tool, "content": []}, media="anthropic")
    assert count_message(tool, media="anthropic") == framing + image_cost
    # The whole history costs far less than the base64 would as text.
    assert count_tokens(messages, media="anthropic") < len(screenshot) // 10


def test_responses_input_image_is_measured_after_conversion() -> None:
    url = data_url(jpeg(800, 600), "image/jpeg")
    items = [
        {"role": "user", "content": [{"type": "input_image", "image_url": url, "detail": "high"}]}
    ]
    messages = from_responses(items)
    expected = billing("openai").image(800, 600)
    assert count_tokens(messages) == count_tokens([{"role": "user", "content": []}]) + expected


# ---------------------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------------------


def test_pdf_pages_are_counted_in_real_files() -> None:
    assert pdf_pages(pdf(1)) == 1
    assert pdf_pages(pdf(7)) == 7
    assert pdf_pages(pdf(12, compact=True)) == 12
    assert pdf_pages(pdf_with_object_stream(9)) == 9
    # No page objects at all: the largest page-tree /Count, then the size.
    assert pdf_pages(b"%PDF-1.4\n1 0 obj << /Type /Pages /Count 42 /Kids [] >> endobj") == 42
    blob = b"%PDF-1.7\n" + bytes(5 * BYTES_PER_PAGE)
    assert pdf_pages(blob) == 6


@pytest.mark.parametrize("media", MEDIA_POLICIES)
def test_a_multi_megabyte_pdf_costs_pages_times_rate(media: str) -> None:
    document = pdf(14, filler=3_000_000)
    encoded = b64(document)
    assert len(encoded) > 4_000_000
    per_page = billing(media).pdf_page
    anthropic_block = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": encoded},
    }
    assert one_part({"role": "user", "content": [anthropic_block]}, media) == 14 * per_page
    openai_file = {
        "type": "file",
        "file": {"filename": "scan.pdf", "file_data": data_url(document, "application/pdf")},
    }
    expected = 14 * per_page + count_text("scan.pdf")
    assert one_part({"role": "user", "content": [openai_file]}, media) == expected
    responses_file = {
        "type": "input_file",
        "filename": "scan.pdf",
        "file_data": data_url(document, "application/pdf"),
    }
    assert one_part({"role": "user", "content": [responses_file]}, media) == expected
    # What the text tokenizer would have made of it: about a million tokens per 1.5 MB.
    assert 14 * per_page < len(encoded) // 40


def test_pdf_is_decoded_once_however_often_it_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = media_module.pdf_pages

    def counting(data: bytes) -> int:
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(media_module, "pdf_pages", counting)
    media_module._memo.clear()  # forget what earlier tests measured
    document = {
        "type": "file",
        "file": {"file_data": data_url(pdf(3, filler=9999), "application/pdf")},
    }
    message = {"role": "user", "content": [document]}
    for media in MEDIA_POLICIES:
        for _ in range(3):
            counter = TokenCounter(media=media, maxsize=0)  # no message cache: measure again
            assert one_part(message, media) == counter.message(message) - 4
            assert estimate_message(message, media=media) == counter.message(message)
    assert len(calls) == 1


def test_documents_whose_bytes_are_absent_count_default_pages() -> None:
    for media in MEDIA_POLICIES:
        expected = REMOTE_DOCUMENT_PAGES * billing(media).pdf_page
        parts = [
            {"type": "document", "source": {"type": "url", "url": "https://x/report.pdf"}},
            {"type": "document", "source": {"type": "file", "file_id": "file_01"}},
            {"type": "file", "file": {"file_id": "file-abc"}},
            {"type": "input_file", "file_id": "file-abc"},
            {"type": "input_file", "file_url": "https://x/report.pdf"},
        ]
        for part in parts:
            assert one_part({"role": "user", "content": [part]}, media) == expected, part


def test_plain_text_documents_count_as_text() -> None:
    text = "Quarterly report.\nRevenue grew 12 % on the year; costs were flat.\n" * 20
    anthropic_text = {
        "type": "document",
        "title": "Q3",
        "context": "internal",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
    }
    expected = count_text(text) + count_text("Q3") + count_text("internal")
    assert one_part({"role": "user", "content": [anthropic_text]}) == expected
    nested = {
        "type": "document",
        "source": {"type": "content", "content": [{"type": "text", "text": text}]},
    }
    assert one_part({"role": "user", "content": [nested]}) == count_text(text)
    as_file = {"type": "file", "file": {"file_data": data_url(text.encode(), "text/plain")}}
    assert one_part({"role": "user", "content": [as_file]}) == count_text(text)
    percent = {"type": "file", "file": {"file_data": "data:text/plain,hello%20world"}}
    assert one_part({"role": "user", "content": [percent]}) == count_text("hello world")


def test_other_binary_files_cost_pages_by_size() -> None:
    blob = random.Random(1).randbytes(3 * BYTES_PER_PAGE + 1)
    part = {"type": "file", "file": {"file_data": data_url(blob, "application/octet-stream")}}
    assert one_part({"role": "user", "content": [part]}) == 4 * billing("openai").pdf_page


def test_audio_costs_a_fixed_amount() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": b64(bytes(50_000)), "format": "wav"}}
    assert one_part({"role": "user", "content": [audio]}) == MEDIA_PART_TOKENS


# ---------------------------------------------------------------------------------------
# Policies: chosen per counter, never mixed in a cache
# ---------------------------------------------------------------------------------------


def test_unknown_policy_is_a_clear_error() -> None:
    message = [{"role": "user", "content": "hi"}]
    for call in (
        lambda: count_tokens(message, media="mistral"),  # type: ignore[arg-type]
        lambda: estimate_tokens(message, media="mistral"),  # type: ignore[arg-type]
        lambda: upper_bound_tokens(message, media="mistral"),  # type: ignore[arg-type]
        lambda: TokenCounter(media="mistral"),  # type: ignore[arg-type]
        lambda: quick_estimate(message[0], media="mistral"),  # type: ignore[arg-type]
        lambda: shared_counter(media=["openai"]),  # type: ignore[arg-type]
    ):
        with pytest.raises(
            UnknownNameError, match=r"unknown media policy .*openai, anthropic, gemini"
        ):
            call()


def test_cache_never_mixes_policies() -> None:
    message = image_message(data_url(png(1920, 1080, pixels=False), "image/png"))
    session = [{"role": "system", "content": "You look at screenshots."}, message]
    by_policy = {
        media: TokenCounter(media=media, maxsize=0).messages(session) for media in MEDIA_POLICIES
    }
    assert len(set(by_policy.values())) == 3
    for order in (list(MEDIA_POLICIES), list(reversed(MEDIA_POLICIES))):
        for media in order:
            assert count_tokens(session, media=media) == by_policy[media]
            assert count_tokens(session, media=media, model="gpt-4o") == by_policy[media]
    counters = {shared_counter("o200k_base", media=media) for media in MEDIA_POLICIES}
    assert len(counters) == 3
    assert shared_counter("o200k_base", media="gemini") is shared_counter(media="gemini")
    assert shared_counter("cl100k_base") is not shared_counter("o200k_base")
    assert repr(TokenCounter(media="gemini")).startswith(
        "TokenCounter(encoding='o200k_base', media='gemini'"
    )


def test_default_policy_is_openai_and_backwards_compatible() -> None:
    message = image_message(data_url(png(512, 512, pixels=False), "image/png"))
    assert count_tokens([message]) == count_tokens([message], media="openai")
    assert count_tokens([message], model="gpt-4") == count_tokens([message], encoding="cl100k_base")
    assert TokenCounter().media == "openai"


# ---------------------------------------------------------------------------------------
# Estimates and bounds agree with the count on media
# ---------------------------------------------------------------------------------------

media_parts = st.one_of(
    st.builds(
        lambda w, h, fmt, detail: {
            "type": "image_url",
            "image_url": {
                "url": data_url(
                    {"png": png(w, h, pixels=False), "gif": gif(w, h), "jpeg": jpeg(w, h)}[fmt],
                    f"image/{fmt}",
                ),
                **({"detail": detail} if detail else {}),
            },
        },
        st.integers(1, 5000),
        st.integers(1, 5000),
        st.sampled_from(["png", "gif", "jpeg"]),
        st.sampled_from([None, "low", "high", "auto"]),
    ),
    st.builds(
        lambda n: {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf(n))},
        },
        st.integers(1, 30),
    ),
    st.builds(lambda text: {"type": "text", "text": text}, st.text(max_size=40)),
    st.just({"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}),
)


@given(parts=st.lists(media_parts, max_size=4), media=st.sampled_from(MEDIA_POLICIES))
@settings(max_examples=examples(120), deadline=None)
def test_estimate_and_bound_count_media_like_the_count(parts: list[Any], media: str) -> None:
    message = {"role": "user", "content": parts}
    text_only = {"role": "user", "content": [p for p in parts if p["type"] == "text"]}
    media_cost = count_message(message, media=media) - count_message(text_only, media=media)
    for encoding in ("o200k_base", "cl100k_base"):
        exact = count_message(message, encoding=encoding, media=media)
        assert upper_bound_message(message, media=media) >= exact
        estimated = estimate_message(message, encoding=encoding, media=media)
        assert estimated - estimate_message(text_only, encoding=encoding, media=media) == media_cost
    assert (
        quick_estimate(message, media=media) - quick_estimate(text_only, media=media) == media_cost
    )
    assert upper_bound_tokens([message], media=media) >= count_tokens([message], media=media)
