"""Content hashes for the result cache: BLAKE2b, from CPython's own ``_blake2`` module where
there is one (``hashlib`` would also load OpenSSL's ``_hashlib``, about 2 ms of every start-up)."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python implementation
    from hashlib import blake2b


def digest(data: bytes, size: int = 16) -> str:
    return blake2b(data, digest_size=size).hexdigest()


def digest_text(*parts: object, size: int = 16) -> str:
    """One hash of several values (joined with a separator no value is expected to hold)."""
    return digest("\x1f".join(map(str, parts)).encode("utf-8", "surrogateescape"), size)
