"""Fresh addresses for the buffers the runner hands a kernel (docs/rules.md: inputs "at a new address").

Caching allocators hand the same block back call after call, so every buffer sits at a random
aligned offset inside its block, chosen among the offsets whose address none of the last
`REMEMBERED_ADDRESSES` buffers had. A block whose every offset was used lately is kept aside
(so the allocator cannot hand it back at once) and another one is taken.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable

import torch

# Buffers remembered: many calls' worth of inputs, outputs and workspaces of both kernels.
REMEMBERED_ADDRESSES = 256
_MAX_BLOCKS = 64


class FreshAddresses:
    """Places each buffer `align * k` bytes into a block from `allocate(nbytes)`, 1 <= k <= `steps`,
    never at an address one of the last `memory` buffers had."""

    def __init__(self, allocate: Callable[[int], torch.Tensor], *, align: int, steps: int,
                 memory: int = REMEMBERED_ADDRESSES, randbelow: Callable[[int], int] = secrets.randbelow) -> None:
        self._allocate, self._align, self._steps, self._randbelow = allocate, align, steps, randbelow
        self._order: deque[int] = deque()
        self._recent: set[int] = set()
        self._memory = memory

    def take(self, nbytes: int) -> torch.Tensor:
        """A uint8 tensor of `nbytes` bytes at an address none of the remembered buffers had."""
        held = []  # blocks with no fresh offset left stay allocated until a good one is found
        for _ in range(_MAX_BLOCKS):
            block = self._allocate(nbytes + self._steps * self._align)
            base = block.data_ptr()
            fresh = [k for k in range(1, self._steps + 1) if base + k * self._align not in self._recent]
            if fresh:
                offset = fresh[self._randbelow(len(fresh))] * self._align
                break
            held.append(block)
        else:  # every block the allocator offered was used at every offset lately: reuse the last
            offset = (1 + self._randbelow(self._steps)) * self._align
        buffer = block[offset : offset + nbytes]
        self._remember(buffer.data_ptr())
        return buffer

    def _remember(self, address: int) -> None:
        self._order.append(address)
        self._recent.add(address)
        if len(self._order) > self._memory:
            self._recent.discard(self._order.popleft())
