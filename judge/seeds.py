"""Seeds the submission cannot predict (docs/rules.md, stage 3; docs/security.md, layer 5)."""

from __future__ import annotations

import hashlib
import secrets


def mixed_seed(secret: bytes, *parts: object) -> int:
    """A 63-bit seed from the judge's secret and the case's public identity.

    Without the secret the seed of a case is unknowable, so a kernel cannot
    precompute its outputs; with the same secret (the service adds a salt of its
    run to it) the same case comes out again, on any host.
    """
    digest = hashlib.blake2b(secret, digest_size=8, person=b"opjudge-seed")
    for part in parts:
        digest.update(repr(part).encode())
        digest.update(b"\x00")
    return int.from_bytes(digest.digest(), "little") & ((1 << 63) - 1)


def fresh_seed() -> int:
    """A seed no earlier call used and nobody can predict (timing calls)."""
    return secrets.randbits(63)
