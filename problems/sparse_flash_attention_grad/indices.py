"""sparse_flash_attention_grad: the sparse_indices generator (spec "Which keys a query token sees")."""

from __future__ import annotations

import torch

from .layout import Sizes, padded_blocks, row_nblk

# Case flags the generator knows (spec "Which keys a query token sees", "How the judge makes a case").
RAGGED_TOPK, CONTRACT_INDICES, VALUE_IS_KEY = "ragged_topk", "contract_indices", "value_is_key"
FLAGS = frozenset({RAGGED_TOPK, CONTRACT_INDICES, VALUE_IS_KEY})
# contract_indices junk: ids far out of range start here (past every key buffer of the spec's sizes).
FAR_ID = 1 << 20
INT32_MAX = (1 << 31) - 1


def draw_indices(sz: Sizes, gen: torch.Generator, *, ragged: bool, contract: bool = False) -> torch.Tensor:
    """sparse_indices [B,S1,N2,K] int32 by the spec's generator rules.

    Each row gets c = min(K, nblk) distinct ids in [0, nblk), ascending, always holding nblk-1;
    the rest are drawn uniformly by sorting random keys. With `ragged`, the count is uniform in
    [1, c] instead (0 for rows that see nothing). Padding is -1.
    With `contract` (the contract_indices flag) the generator uses what the contract leaves free:
    half the rows with nblk >= 2 leave block nblk-1 out (c = min(K, nblk-1) there), each row's
    ids come in random order, and after the -1 that ends a short list come junk entries (see
    `_junk`). The contract's draws come after the plain ones, so q, k, v and d_out stay those of
    the unflagged case, and rows are drawn from the same keys.
    """
    rows_nblk = row_nblk(sz)
    width = max(int(rows_nblk.max()) if sz.rows else 0, 1)
    keys = torch.rand((sz.rows, width), generator=gen, dtype=torch.float32)
    u = torch.rand(sz.rows, generator=gen, dtype=torch.float64) if ragged else None
    omit = torch.zeros(sz.rows, dtype=torch.bool)
    if contract:
        omit = (torch.rand(sz.rows, generator=gen, dtype=torch.float32) < 0.5) & (rows_nblk >= 2)
    candidates = rows_nblk - omit.to(torch.int64)  # an omitted last block is no candidate
    col = torch.arange(width).view(1, -1)
    keys = torch.where(col < candidates.view(-1, 1), keys, torch.full_like(keys, 2.0))
    forced = (col == (rows_nblk - 1).view(-1, 1)) & ~omit.view(-1, 1)
    keys = torch.where(forced, torch.full_like(keys, -1.0), keys)
    order = torch.argsort(keys, dim=1, stable=True)  # the forced last block first, then random ones
    count = candidates.clamp(max=sz.K)
    if u is not None:
        count = torch.where(count > 0, (u * count).floor().to(torch.int64) + 1, count)
    take = min(sz.K, width)
    listed = torch.arange(take).view(1, -1) < count.view(-1, 1)
    if contract:
        return _contract_rows(sz, gen, order[:, :take], listed, count, rows_nblk)
    chosen = torch.where(listed, order[:, :take], width)
    chosen = chosen.sort(dim=1).values
    chosen = torch.where(chosen == width, -1, chosen)
    result = torch.full((sz.rows, sz.K), -1, dtype=torch.int32)
    result[:, :take] = chosen.to(torch.int32)
    return result.view(sz.B, sz.S1, sz.N2, sz.K)


def _contract_rows(
    sz: Sizes, gen: torch.Generator, chosen: torch.Tensor, listed: torch.Tensor, count: torch.Tensor,
    rows_nblk: torch.Tensor,
) -> torch.Tensor:
    """The contract_indices rows: the `count` chosen ids in random order, then -1, then junk."""
    take = chosen.shape[1]
    shuffle = torch.rand((sz.rows, take), generator=gen, dtype=torch.float32)
    shuffle = torch.where(listed, shuffle, torch.full_like(shuffle, 2.0))
    chosen = torch.gather(chosen, 1, torch.argsort(shuffle, dim=1, stable=True))
    result = _junk(sz, gen, rows_nblk)
    result[:, :take] = torch.where(listed, chosen, result[:, :take])
    short = count < sz.K  # a full list has no -1 and no junk
    end = torch.where(short, count, 0).view(-1, 1)
    result.scatter_(1, end, torch.where(short.view(-1, 1), -1, result.gather(1, end)))
    return result.to(torch.int32).view(sz.B, sz.S1, sz.N2, sz.K)


def _junk(sz: Sizes, gen: torch.Generator, rows_nblk: torch.Tensor) -> torch.Tensor:
    """[rows, K] int64 entries a kernel must never read as ids (spec: junk after the first -1).

    Half are valid-looking ids in [0, nblk) (repeats of listed ids and unlisted ones; a row that
    sees nothing gets ids of the key buffer instead), a quarter are out of range (just past nblk,
    up to the buffer's end, or far past it) and a quarter are negative other than -1.
    """
    kind = torch.rand((sz.rows, sz.K), generator=gen, dtype=torch.float32).double()
    r = torch.rand((sz.rows, sz.K), generator=gen, dtype=torch.float32).double()
    nblk = rows_nblk.view(-1, 1)
    total = padded_blocks(sz)
    looking = torch.where(nblk > 0, nblk, total)
    valid_looking = (r * looking).floor().to(torch.int64).clamp(max=looking - 1)
    near = nblk + (2 * r * (total - nblk + 1)).floor().to(torch.int64)
    far = (FAR_ID + (2 * r - 1) * (INT32_MAX - FAR_ID)).floor().to(torch.int64)
    out_of_range = torch.where(r < 0.5, near, far)
    small = -2 - (2 * r * 16).floor().to(torch.int64)  # -2 .. -17
    large = -18 - ((2 * r - 1) * (INT32_MAX - 17)).floor().to(torch.int64)  # down to -2^31
    negative = torch.where(r < 0.5, small, large)
    return torch.where(kind < 0.5, valid_looking, torch.where(kind < 0.75, out_of_range, negative))
