"""sparse_flash_attention_grad: sizes and the row/block layout the generator and the oracle share.

BSND tensors are viewed as "rows" r = (b*S1 + s)*N2 + n2, each with its G query heads (q
[B,S1,N1,D] is [B,S1,N2,G,D] because head h = n2*G + g), and keys are stored as whole blocks of
bs tokens, one row per (b, n2, block). A chunk of rows gathers only the blocks those rows list
and scatter-adds their gradients back with index_add_, so memory is bounded by the chunk budget:
no [S1, S2] matrix ever exists.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, NamedTuple

import torch

# Elements of the per-chunk temporaries (gathered keys and values, scores, their gradients).
# 2^23 float64 elements are 64 MiB: the oracle's memory beyond its inputs and outputs.
CHUNK_ELEMENTS = 1 << 23


class Sizes(NamedTuple):
    B: int
    S1: int
    S2: int
    N1: int
    N2: int
    D: int
    Dr: int
    K: int
    block_size: int
    sparse_mode: int
    scale: float

    @property
    def G(self) -> int:
        return self.N1 // self.N2

    @property
    def rows(self) -> int:
        return self.B * self.S1 * self.N2

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Sizes:
        """From a case's params (ABI field names); `scale` defaults to 1/sqrt(D + Dr)."""
        ints = {k: int(params[k]) for k in ("B", "S1", "S2", "N1", "N2", "D", "Dr", "K", "block_size")}
        mode = int(params.get("sparse_mode", 0))
        if mode not in (0, 3):
            raise ValueError(f"sparse_mode must be 0 or 3, not {mode}")
        if ints["N1"] % ints["N2"]:
            raise ValueError("N1 must be a multiple of N2")
        scale = float(params.get("scale", 1.0 / math.sqrt(ints["D"] + ints["Dr"])))
        return cls(sparse_mode=mode, scale=scale, **ints)


def thresholds(sz: Sizes) -> torch.Tensor:
    """thr(s) for s in [0, S1): S2 (mode 0) or clamp(S2 - S1 + s + 1, 0, S2) (mode 3, right-down causal)."""
    s = torch.arange(sz.S1, dtype=torch.int64)
    if sz.sparse_mode == 0:
        return torch.full_like(s, sz.S2)
    return (s + (sz.S2 - sz.S1 + 1)).clamp(0, sz.S2)


def row_nblk(sz: Sizes) -> torch.Tensor:
    """nblk(s) of every row (b, s, n2), [rows] int64."""
    nblk = (thresholds(sz) + sz.block_size - 1) // sz.block_size  # [S1]
    return nblk.view(1, sz.S1, 1).expand(sz.B, sz.S1, sz.N2).reshape(-1)


def valid_prefix(ids: torch.Tensor) -> torch.Tensor:
    # A row's list ends at its first -1 (spec): later entries are ignored whatever they hold
    # (contract_indices junk included). Ending at the first negative entry is the same on every
    # row the contract allows, whose listed ids are all >= 0, and keeps negative ids out of the
    # gathers below.
    return torch.cumprod((ids >= 0).to(torch.int8), dim=1).bool()


class Chunk(NamedTuple):
    start: int  # first row
    stop: int  # one past the last row
    blocks: torch.Tensor  # [c, Wb] index into the blocked key layout (see blocked); 0 where unused
    mask: torch.Tensor  # [c, Wb * bs] the key is visible to the row


def padded_blocks(sz: Sizes) -> int:
    return -(-sz.S2 // sz.block_size)


def blocked(sz: Sizes, t: torch.Tensor) -> torch.Tensor:
    """[B, S2, N2, X] -> [B*N2*nblk, bs*X]: one row per key block, zero-padded past S2.

    Gathering and scatter-adding whole blocks moves the same bytes as per-token indexing in
    bs times fewer, longer rows, which index_select and index_add_ do several times faster.
    """
    nblk = padded_blocks(sz)
    out = t.new_zeros(sz.B, sz.N2, nblk * sz.block_size, t.shape[-1])
    out[:, :, : sz.S2] = t.permute(0, 2, 1, 3)
    return out.view(sz.B * sz.N2 * nblk, sz.block_size * t.shape[-1])


def unblocked(sz: Sizes, t: torch.Tensor) -> torch.Tensor:
    """Inverse of `blocked`: [B*N2*nblk, bs*X] -> [B, S2, N2, X]."""
    width = t.shape[-1] // sz.block_size
    full = t.view(sz.B, sz.N2, padded_blocks(sz) * sz.block_size, width)
    return full[:, :, : sz.S2].permute(0, 2, 1, 3)


def chunks(sz: Sizes, indices: torch.Tensor, per_row_elements: int) -> Iterator[Chunk]:
    """Row chunks with the key blocks each row sees; a chunk holds about CHUNK_ELEMENTS / per_row_elements
    rows of the widest possible list (rows that see nothing are skipped)."""
    ids_all = indices.reshape(sz.rows, sz.K).to(torch.int64)
    nblk = padded_blocks(sz)
    widest = max(1, min(sz.K, nblk) * sz.block_size)
    step = max(1, CHUNK_ELEMENTS // (widest * per_row_elements))
    thr_rows = thresholds(sz).view(1, sz.S1, 1).expand(sz.B, sz.S1, sz.N2).reshape(-1)
    within = torch.arange(sz.block_size).view(1, 1, -1)
    for start in range(0, sz.rows, step):
        stop = min(start + step, sz.rows)
        ids = ids_all[start:stop]
        valid = valid_prefix(ids)
        width = int(valid.sum(dim=1).max()) if stop > start else 0
        if width == 0:
            continue
        ids, valid = ids[:, :width], valid[:, :width]
        tok = ids.unsqueeze(-1) * sz.block_size + within  # [c, Wb, bs]
        thr = thr_rows[start:stop].view(-1, 1, 1)
        mask = (valid.unsqueeze(-1) & (tok < thr) & (tok >= 0)).reshape(stop - start, -1)
        row = torch.arange(start, stop).view(-1, 1)
        b, n2 = row // (sz.S1 * sz.N2), row % sz.N2
        blocks = (b * sz.N2 + n2) * nblk + ids
        yield Chunk(start, stop, torch.where(valid & (ids < nblk), blocks, 0), mask)


def count_pairs(sz: Sizes, indices: torch.Tensor) -> int:
    """P = sum over (b, s, h) of |Tok(b, s, h/G)|, from the actual indices."""
    ids = indices.reshape(sz.rows, sz.K).to(torch.int64)
    valid = valid_prefix(ids)
    thr = thresholds(sz).view(1, sz.S1, 1).expand(sz.B, sz.S1, sz.N2).reshape(-1, 1)
    per_block = (thr - ids * sz.block_size).clamp(0, sz.block_size)
    return int(torch.where(valid, per_block, 0).sum()) * sz.G
