"""Public submission ids: what teams see and pass instead of the database's sequential ids.

A sequential id tells a team how many submissions every other team made between two
of its own, even while the board is frozen (docs/security.md, "Submission ids"). A
public id is random, so it carries no order and no count, and it cannot be guessed.
"""

from __future__ import annotations

import re
import secrets

# No 0/o, 1/l/i: an id read aloud or copied by hand cannot be mistaken for another.
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
LETTERS = "abcdefghjkmnpqrstuvwxyz"
LENGTH = 12  # 23 * 31**11: about 59 bits, far beyond guessing through a rate-limited API
PATTERN = re.compile(rf"[{LETTERS}][{ALPHABET}]{{{LENGTH - 1}}}")
EXAMPLE = "k3xq7m2rpa9d"


def new_public_id() -> str:
    """A fresh public id. It starts with a letter, so it is never all digits like an old numeric id."""
    return secrets.choice(LETTERS) + "".join(secrets.choice(ALPHABET) for _ in range(LENGTH - 1))


def is_public_id(value: str) -> bool:
    return PATTERN.fullmatch(value) is not None
