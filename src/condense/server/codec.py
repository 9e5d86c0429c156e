"""Content codings of HTTP bodies: undo ``gzip``, ``deflate``, ``zstd`` and ``br``.

The proxy reads request bodies that clients compressed (the OpenAI and Anthropic SDKs can
send ``Content-Encoding: gzip``; Codex sends ``zstd``) and the error bodies of refusals it
has to understand. Bodies it relays are never decoded: they go on as they came.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from condense.exceptions import BodyDecodingError

__all__ = ["BodyDecodingError", "decode"]

_MAX_DECODED = 256 * 1024 * 1024  # a request body larger than this is refused


def decode(data: bytes, coding: str | None) -> bytes:
    """``data`` with every coding of a ``Content-Encoding`` value undone (last first)."""
    if not coding:
        return data
    for name in reversed([part.strip().lower() for part in coding.split(",") if part.strip()]):
        if name == "identity":
            continue
        decoder = _DECODERS.get(name)
        if decoder is None:
            raise BodyDecodingError(f"unsupported Content-Encoding {name!r}")
        try:
            data = decoder(data)
        except BodyDecodingError:
            raise
        except Exception as error:  # each library raises its own type
            raise BodyDecodingError(f"the body is not valid {name} data ({error})") from None
        if len(data) > _MAX_DECODED:
            raise BodyDecodingError("the decoded body is larger than 256 MiB")
    return data


def _gzip(data: bytes) -> bytes:
    decoder = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
    out = decoder.decompress(data, _MAX_DECODED + 1)
    if not decoder.eof:
        raise BodyDecodingError("the gzip body is cut off (or larger than 256 MiB)")
    return out


def _deflate(data: bytes) -> bytes:
    try:
        return zlib.decompress(data)
    except zlib.error:
        return zlib.decompress(data, -zlib.MAX_WBITS)  # raw deflate, as some servers send


def _zstd(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+

        return bytes(zstd.decompress(data))
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        raise BodyDecodingError(
            "a zstd body needs the 'zstandard' package: pip install 'condense[proxy]'"
        ) from None
    reader = zstandard.ZstdDecompressor().stream_reader(data)
    out = reader.read(_MAX_DECODED + 1)
    return bytes(out)


def _brotli(data: bytes) -> bytes:
    try:
        import brotli  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise BodyDecodingError("a br body needs the 'brotli' package") from None
    return bytes(brotli.decompress(data))


_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": _gzip,
    "x-gzip": _gzip,
    "deflate": _deflate,
    "zstd": _zstd,
    "br": _brotli,
}
