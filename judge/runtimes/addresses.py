"""Fresh addresses for the buffers the runner hands a kernel (judging.md: inputs "at a new address").

Caching allocators hand the same block back call after call, so every buffer sits at a random
aligned offset inside its block. An offset alone still repeats an address about once in as many
calls as there are offsets, which lets a cache keyed by pointer hit now and then; the redraw
here makes a repeat impossible within the remembered window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import torch

# Buffers remembered: a few calls' worth of inputs, outputs and workspaces of both kernels.
REMEMBERED_ADDRESSES = 256
_MAX_DRAWS = 32


class FreshAddresses:
    """Places each buffer at `pick_offset()` bytes into a new block from `allocate(nbytes)`, never at
    an address one of the last `memory` buffers had."""

    def __init__(self, allocate: Callable[[int], torch.Tensor], pick_offset: Callable[[], int],
                 memory: int = REMEMBERED_ADDRESSES) -> None:
        self._allocate, self._pick_offset = allocate, pick_offset
        self._order: deque[int] = deque()
        self._recent: set[int] = set()
        self._memory = memory

    def take(self, nbytes: int) -> torch.Tensor:
        """A uint8 tensor of `nbytes` bytes at an address none of the remembered buffers had."""
        held = []  # rejected blocks stay allocated so the allocator cannot hand them back at once
        for _ in range(_MAX_DRAWS):
            offset = self._pick_offset()
            block = self._allocate(nbytes + offset)
            buffer = block[offset : offset + nbytes]
            if buffer.data_ptr() not in self._recent:
                break
            held.append(block)
        self._remember(buffer.data_ptr())
        return buffer

    def _remember(self, address: int) -> None:
        self._order.append(address)
        self._recent.add(address)
        if len(self._order) > self._memory:
            self._recent.discard(self._order.popleft())
