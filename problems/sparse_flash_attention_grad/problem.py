"""sparse_flash_attention_grad: generator, oracle, reference and pass rule.

Implements `judge.problem.ProblemModule` for shared/spec/sparse_flash_attention_grad.md.
One file on purpose: the judge hashes problem.py (with problem.toml and the header) into the
problem's definition_hash, which keys the oracle cache, so all arithmetic that determines G and R
lives here.

Layout trick used throughout: BSND tensors are viewed as "rows" r = (b*S1 + s)*N2 + n2, each with
its G query heads (q [B,S1,N1,D] is [B,S1,N2,G,D] because head h = n2*G + g), and keys are
stored as whole blocks of bs tokens, one row per (b, n2, block). A chunk of rows gathers only the
blocks those rows list and scatter-adds their gradients back with index_add_, so memory is
bounded by the chunk budget: no [S1, S2] matrix ever exists.
Classes are NamedTuples, not dataclasses: the judge loads this file by path without registering
it in sys.modules, which dataclasses need.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import torch

from judge.checking import error_stats, fmt, nonfinite_reason
from judge.problem import Case
from judge.results import OutputCheck

_HERE = Path(__file__).resolve().parent

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Inputs drawn from N(0, 1), in the order the spec lists them (the draw order fixes the bytes).
NORMAL_INPUTS = ("q", "q_rope", "k", "k_rope", "v", "d_out")
ROPE_NAMES = ("q_rope", "k_rope", "dq_rope", "dk_rope")

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


# Case flags the generator knows (spec "Which keys a query token sees", "How the judge makes a case").
RAGGED_TOPK, CONTRACT_INDICES, VALUE_IS_KEY = "ragged_topk", "contract_indices", "value_is_key"
FLAGS = frozenset({RAGGED_TOPK, CONTRACT_INDICES, VALUE_IS_KEY})
# contract_indices junk: ids far out of range start here (past every key buffer of the spec's sizes).
FAR_ID = 1 << 20
INT32_MAX = (1 << 31) - 1


def _row_nblk(sz: Sizes) -> torch.Tensor:
    """nblk(s) of every row (b, s, n2), [rows] int64."""
    nblk = (thresholds(sz) + sz.block_size - 1) // sz.block_size  # [S1]
    return nblk.view(1, sz.S1, 1).expand(sz.B, sz.S1, sz.N2).reshape(-1)


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
    rows_nblk = _row_nblk(sz)
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
    total = _padded_blocks(sz)
    looking = torch.where(nblk > 0, nblk, total)
    valid_looking = (r * looking).floor().to(torch.int64).clamp(max=looking - 1)
    near = nblk + (2 * r * (total - nblk + 1)).floor().to(torch.int64)
    far = (FAR_ID + (2 * r - 1) * (INT32_MAX - FAR_ID)).floor().to(torch.int64)
    out_of_range = torch.where(r < 0.5, near, far)
    small = -2 - (2 * r * 16).floor().to(torch.int64)  # -2 .. -17
    large = -18 - ((2 * r - 1) * (INT32_MAX - 17)).floor().to(torch.int64)  # down to -2^31
    negative = torch.where(r < 0.5, small, large)
    return torch.where(kind < 0.5, valid_looking, torch.where(kind < 0.75, out_of_range, negative))


def _valid_prefix(ids: torch.Tensor) -> torch.Tensor:
    # A row's list ends at its first -1 (spec): later entries are ignored whatever they hold
    # (contract_indices junk included). Ending at the first negative entry is the same on every
    # row the contract allows, whose listed ids are all >= 0, and keeps negative ids out of the
    # gathers below.
    return torch.cumprod((ids >= 0).to(torch.int8), dim=1).bool()


class Chunk(NamedTuple):
    start: int  # first row
    stop: int  # one past the last row
    blocks: torch.Tensor  # [c, Wb] index into the blocked key layout (see _blocked); 0 where unused
    mask: torch.Tensor  # [c, Wb * bs] the key is visible to the row


def _padded_blocks(sz: Sizes) -> int:
    return -(-sz.S2 // sz.block_size)


def _blocked(sz: Sizes, t: torch.Tensor) -> torch.Tensor:
    """[B, S2, N2, X] -> [B*N2*nblk, bs*X]: one row per key block, zero-padded past S2.

    Gathering and scatter-adding whole blocks moves the same bytes as per-token indexing in
    bs times fewer, longer rows, which index_select and index_add_ do several times faster.
    """
    nblk = _padded_blocks(sz)
    out = t.new_zeros(sz.B, sz.N2, nblk * sz.block_size, t.shape[-1])
    out[:, :, : sz.S2] = t.permute(0, 2, 1, 3)
    return out.view(sz.B * sz.N2 * nblk, sz.block_size * t.shape[-1])


def _unblocked(sz: Sizes, t: torch.Tensor) -> torch.Tensor:
    """Inverse of `_blocked`: [B*N2*nblk, bs*X] -> [B, S2, N2, X]."""
    width = t.shape[-1] // sz.block_size
    full = t.view(sz.B, sz.N2, _padded_blocks(sz) * sz.block_size, width)
    return full[:, :, : sz.S2].permute(0, 2, 1, 3)


def chunks(sz: Sizes, indices: torch.Tensor, per_row_elements: int) -> Iterator[Chunk]:
    """Row chunks with the key blocks each row sees; a chunk holds about CHUNK_ELEMENTS / per_row_elements
    rows of the widest possible list (rows that see nothing are skipped)."""
    ids_all = indices.reshape(sz.rows, sz.K).to(torch.int64)
    nblk = _padded_blocks(sz)
    widest = max(1, min(sz.K, nblk) * sz.block_size)
    step = max(1, CHUNK_ELEMENTS // (widest * per_row_elements))
    thr_rows = thresholds(sz).view(1, sz.S1, 1).expand(sz.B, sz.S1, sz.N2).reshape(-1)
    within = torch.arange(sz.block_size).view(1, 1, -1)
    for start in range(0, sz.rows, step):
        stop = min(start + step, sz.rows)
        ids = ids_all[start:stop]
        valid = _valid_prefix(ids)
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
    valid = _valid_prefix(ids)
    thr = thresholds(sz).view(1, sz.S1, 1).expand(sz.B, sz.S1, sz.N2).reshape(-1, 1)
    per_block = (thr - ids * sz.block_size).clamp(0, sz.block_size)
    return int(torch.where(valid, per_block, 0).sum()) * sz.G


def _cat_rope(main: torch.Tensor, rope: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor:
    # q|q_rope and k|k_rope are one dot product each: concatenate along the head dim.
    if rope is None:
        return main.to(dtype)
    return torch.cat([main.to(dtype), rope.to(dtype)], dim=-1)


def _row_stats(sz: Sizes, stat: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    # [B, N2, S1, G] -> [rows, G] in row order (b, s, n2).
    return stat.to(dtype).permute(0, 2, 1, 3).reshape(sz.rows, sz.G)


# The forward multiplies every query row with all S2 keys (masked) when that costs less than
# gathering the keys each row sees: one gathered float costs about this many multiply-adds.
GATHER_COST_IN_MACS = 32


def forward(sz: Sizes, inputs: dict[str, Any], indices: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """float32 forward on the (rounded) inputs: out [B,S1,N1,D], softmax_max and softmax_sum [B,N2,S1,G].

    Rows that see nothing get out = softmax_max = softmax_sum = 0 (spec). It runs before every
    call in the runner child (fresh inputs), so it takes the cheaper of two equal computations:
    dense (all keys, masked) where rows see a large share of S2, gathered blocks elsewhere.
    """
    if _dense_is_cheaper(sz):
        return _dense_forward(sz, inputs, indices)
    f32 = torch.float32
    dt = sz.D + sz.Dr
    q = _cat_rope(inputs["q"], inputs["q_rope"], f32).view(sz.rows, sz.G, dt)
    k = _blocked(sz, _cat_rope(inputs["k"], inputs["k_rope"], f32))
    v = _blocked(sz, inputs["v"].to(f32))
    out = torch.zeros(sz.rows, sz.G, sz.D, dtype=f32)
    row_max = torch.zeros(sz.rows, sz.G, dtype=f32)
    row_sum = torch.zeros(sz.rows, sz.G, dtype=f32)
    for ch in chunks(sz, indices, dt + sz.D + 3 * sz.G):
        c = ch.stop - ch.start
        kg = k[ch.blocks].view(c, -1, dt)  # [c, W, Dt]
        z = torch.bmm(q[ch.start : ch.stop], kg.transpose(1, 2)) * sz.scale  # [c, G, W]
        visible = ch.mask.unsqueeze(1)
        z = z.masked_fill(~visible, -math.inf)
        m = z.amax(dim=2)
        seen = ch.mask.any(dim=1, keepdim=True).expand_as(m)
        m = torch.where(seen, m, 0.0)
        p = torch.exp(z - m.unsqueeze(-1))  # exp(-inf) = 0 for masked keys
        denom = p.sum(dim=2)
        o = torch.bmm(p, v[ch.blocks].view(c, -1, sz.D)) / torch.where(seen, denom, 1.0).unsqueeze(-1)
        out[ch.start : ch.stop] = o
        row_max[ch.start : ch.stop] = m
        row_sum[ch.start : ch.stop] = denom
    stat_shape = (sz.B, sz.S1, sz.N2, sz.G)
    return (
        out.view(sz.B, sz.S1, sz.N1, sz.D),
        row_max.view(stat_shape).permute(0, 2, 1, 3).contiguous(),
        row_sum.view(stat_shape).permute(0, 2, 1, 3).contiguous(),
    )


def _dense_is_cheaper(sz: Sizes) -> bool:
    """All S2 keys per query token (masked) cost less than gathering the keys a row sees (at most
    K blocks, at most thr(s) keys: their mean over the rows)."""
    if sz.S1 == 0 or sz.S2 == 0:
        return False
    seen = float(thresholds(sz).clamp(max=sz.K * sz.block_size).double().mean())
    return sz.S2 * sz.G <= max(1.0, seen) * (sz.G + GATHER_COST_IN_MACS)


def _dense_backward(sz: Sizes, inputs: dict[str, Any], *, ref: bool, out_dtype: torch.dtype | None
                    ) -> dict[str, torch.Tensor]:
    """`backward` as masked dense products per (b, n2), in chunks of query tokens: the same
    formulas (masked keys get P = dS = 0 exactly), another summation order."""
    acc = torch.float32 if ref else torch.float64
    dt = sz.D + sz.Dr
    q = _cat_rope(inputs["q"], inputs["q_rope"], acc).view(sz.B, sz.S1, sz.N2, sz.G, dt)
    k = _cat_rope(inputs["k"], inputs["k_rope"], acc)  # [B, S2, N2, Dt]
    v = inputs["v"].to(acc)
    d_out = inputs["d_out"].to(acc).view(sz.B, sz.S1, sz.N2, sz.G, sz.D)
    delta = (d_out * inputs["out"].to(acc).view(sz.B, sz.S1, sz.N2, sz.G, sz.D)).sum(dim=-1)
    stats = {n: inputs[n].to(acc).permute(0, 2, 1, 3) for n in ("softmax_max", "softmax_sum")}  # [B, S1, N2, G]
    ids_all = inputs["sparse_indices"].view(sz.B, sz.S1, sz.N2, sz.K)
    dq = torch.zeros(sz.B, sz.S1, sz.N2, sz.G, dt, dtype=acc)
    dk = torch.zeros(sz.B, sz.S2, sz.N2, dt, dtype=acc)
    dv = torch.zeros(sz.B, sz.S2, sz.N2, sz.D, dtype=acc)
    step = max(1, CHUNK_ELEMENTS // max(1, 4 * sz.G * sz.S2))
    for b in range(sz.B):
        for n2 in range(sz.N2):
            visible = _visible(sz, ids_all[b, :, n2])
            kb, vb = k[b, :, n2], v[b, :, n2]
            for start in range(0, sz.S1, step):
                stop = min(start + step, sz.S1)
                c = stop - start
                qc, doc = q[b, start:stop, n2].reshape(-1, dt), d_out[b, start:stop, n2].reshape(-1, sz.D)
                z = (qc @ kb.t()).view(c, sz.G, sz.S2) * sz.scale
                m, total = (stats[n][b, start:stop, n2].unsqueeze(-1) for n in ("softmax_max", "softmax_sum"))
                p = torch.where(visible[start:stop].unsqueeze(1), torch.exp(z - m) / total, 0.0)
                ds = p * ((doc @ vb.t()).view(c, sz.G, sz.S2) - delta[b, start:stop, n2].unsqueeze(-1))
                if ref:
                    p = p.to(out_dtype).to(acc)
                    ds = ds.to(out_dtype).to(acc)
                p, ds = p.view(-1, sz.S2), ds.view(-1, sz.S2)
                dq[b, start:stop, n2] = (ds @ kb).view(c, sz.G, dt)
                dk[b, :, n2] += ds.t() @ qc
                dv[b, :, n2] += p.t() @ doc
    dq *= sz.scale
    dk *= sz.scale
    final = out_dtype if ref else acc
    dq = dq.view(sz.B, sz.S1, sz.N1, dt)
    result = {"dq": dq[..., : sz.D], "dk": dk[..., : sz.D], "dv": dv}
    if sz.Dr:
        result["dq_rope"] = dq[..., sz.D :]
        result["dk_rope"] = dk[..., sz.D :]
    return {name: t.to(final).contiguous() for name, t in result.items()}


def _visible(sz: Sizes, ids: torch.Tensor) -> torch.Tensor:
    """[S1, S2] bool: the keys each query token s of one (b, n2) sees, from its rows' ids [S1, K]."""
    ids = ids.to(torch.int64)
    valid = _valid_prefix(ids)
    tok = ids.unsqueeze(-1) * sz.block_size + torch.arange(sz.block_size).view(1, 1, -1)  # [S1, K, bs]
    thr = thresholds(sz).view(-1, 1, 1)
    keep = valid.unsqueeze(-1) & (tok < thr) & (tok >= 0)
    mask = torch.zeros(sz.S1, sz.S2 + 1, dtype=torch.bool)
    mask.scatter_(1, torch.where(keep, tok, sz.S2).view(sz.S1, -1), True)
    return mask[:, : sz.S2]


def _dense_forward(sz: Sizes, inputs: dict[str, Any], indices: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """`forward` as masked dense products per (b, n2), in chunks of query tokens (same figures up
    to the float32 sum order)."""
    f32 = torch.float32
    dt = sz.D + sz.Dr
    q = _cat_rope(inputs["q"], inputs["q_rope"], f32).view(sz.B, sz.S1, sz.N2, sz.G, dt)
    k = _cat_rope(inputs["k"], inputs["k_rope"], f32)  # [B, S2, N2, Dt]
    v = inputs["v"].to(f32)
    ids_all = indices.view(sz.B, sz.S1, sz.N2, sz.K)
    out = torch.zeros(sz.B, sz.S1, sz.N2, sz.G, sz.D, dtype=f32)
    row_max = torch.zeros(sz.B, sz.S1, sz.N2, sz.G, dtype=f32)
    row_sum = torch.zeros(sz.B, sz.S1, sz.N2, sz.G, dtype=f32)
    step = max(1, CHUNK_ELEMENTS // max(1, 2 * sz.G * sz.S2))
    for b in range(sz.B):
        for n2 in range(sz.N2):
            visible = _visible(sz, ids_all[b, :, n2])
            kt, vb = k[b, :, n2].t(), v[b, :, n2]
            for start in range(0, sz.S1, step):
                stop = min(start + step, sz.S1)
                seen_keys = visible[start:stop].unsqueeze(1)  # [c, 1, S2]
                z = (q[b, start:stop, n2].reshape(-1, dt) @ kt).view(stop - start, sz.G, sz.S2) * sz.scale
                z = z.masked_fill(~seen_keys, -math.inf)
                m = z.amax(dim=2)
                seen = seen_keys.any(dim=2).expand_as(m)
                m = torch.where(seen, m, 0.0)
                p = torch.exp(z - m.unsqueeze(-1))
                denom = p.sum(dim=2)
                o = (p.view(-1, sz.S2) @ vb).view(stop - start, sz.G, sz.D)
                out[b, start:stop, n2] = o / torch.where(seen, denom, 1.0).unsqueeze(-1)
                row_max[b, start:stop, n2] = m
                row_sum[b, start:stop, n2] = denom
    return (
        out.view(sz.B, sz.S1, sz.N1, sz.D),
        row_max.permute(0, 2, 1, 3).contiguous(),
        row_sum.permute(0, 2, 1, 3).contiguous(),
    )


def backward(
    sz: Sizes, inputs: dict[str, Any], *, mode: str, out_dtype: torch.dtype | None = None
) -> dict[str, torch.Tensor]:
    """dq, dq_rope, dk, dk_rope, dv by the spec's formulas, chunk by chunk.

    mode "oracle": everything in float64 (G). mode "reference": the spec's recipe for R: float32
    throughout, P and dS rounded to `out_dtype` before the products, scale applied after the
    sums, each output rounded to `out_dtype` once at the end.
    """
    ref = mode == "reference"
    if mode not in ("oracle", "reference") or (ref and out_dtype is None):
        raise ValueError(f"bad backward mode {mode!r}")
    if _dense_is_cheaper(sz):
        return _dense_backward(sz, inputs, ref=ref, out_dtype=out_dtype)
    acc = torch.float32 if ref else torch.float64
    dt = sz.D + sz.Dr
    q = _cat_rope(inputs["q"], inputs["q_rope"], acc).view(sz.rows, sz.G, dt)
    k = _blocked(sz, _cat_rope(inputs["k"], inputs["k_rope"], acc))
    v = _blocked(sz, inputs["v"].to(acc))
    d_out = inputs["d_out"].to(acc).reshape(sz.rows, sz.G, sz.D)
    delta = (d_out * inputs["out"].to(acc).reshape(sz.rows, sz.G, sz.D)).sum(dim=2)  # [rows, G]
    row_max = _row_stats(sz, inputs["softmax_max"], acc)
    row_sum = _row_stats(sz, inputs["softmax_sum"], acc)
    dq = torch.zeros(sz.rows, sz.G, dt, dtype=acc)
    dk = torch.zeros(k.shape, dtype=acc)
    dv = torch.zeros(v.shape, dtype=acc)
    for ch in chunks(sz, indices=inputs["sparse_indices"], per_row_elements=2 * dt + 2 * sz.D + 5 * sz.G):
        rows = slice(ch.start, ch.stop)
        c = ch.stop - ch.start
        kg, vg = k[ch.blocks].view(c, -1, dt), v[ch.blocks].view(c, -1, sz.D)
        qg, dog = q[rows], d_out[rows]
        z = torch.bmm(qg, kg.transpose(1, 2)) * sz.scale  # [c, G, W]
        p = torch.exp(z - row_max[rows].unsqueeze(-1)) / row_sum[rows].unsqueeze(-1)
        # where, not multiply: masked keys (and rows with softmax_sum 0) may give inf or NaN here.
        p = torch.where(ch.mask.unsqueeze(1), p, 0.0)
        ds = p * (torch.bmm(dog, vg.transpose(1, 2)) - delta[rows].unsqueeze(-1))
        if ref:
            p = p.to(out_dtype).to(acc)
            ds = ds.to(out_dtype).to(acc)
        dq[rows] = torch.bmm(ds, kg)
        flat = ch.blocks.reshape(-1)
        dk.index_add_(0, flat, torch.bmm(ds.transpose(1, 2), qg).reshape(flat.numel(), -1))
        dv.index_add_(0, flat, torch.bmm(p.transpose(1, 2), dog).reshape(flat.numel(), -1))
    dq *= sz.scale
    dk *= sz.scale
    final = out_dtype if ref else acc
    dk_full = _unblocked(sz, dk)
    result = {
        "dq": dq[..., : sz.D].reshape(sz.B, sz.S1, sz.N1, sz.D),
        "dk": dk_full[..., : sz.D],
        "dv": _unblocked(sz, dv),
    }
    if sz.Dr:
        result["dq_rope"] = dq[..., sz.D :].reshape(sz.B, sz.S1, sz.N1, sz.Dr)
        result["dk_rope"] = dk_full[..., sz.D :]
    return {name: t.to(final).contiguous() for name, t in result.items()}


@cache
def _tolerance() -> dict[str, Any]:
    # problem.toml is the one source of the pass rule's numbers.
    return tomllib.loads((_HERE / "problem.toml").read_text())["tolerance"]


def sizes(case: Case) -> Sizes:
    """The case's sizes and attributes."""
    return Sizes.from_params(case.params)


def _placed_on(device: torch.device | str) -> Any:
    """New tensors made on `device`, so the same code runs on the CPU or on a device track's GPU.

    The device context is a Python-level dispatch mode that costs every torch call a little:
    entered only off the CPU, where factory functions need it.
    """
    return torch.device(device) if torch.device(device).type != "cpu" else nullcontext()


@contextmanager
def _single_thread_on(device: torch.device | str) -> Iterator[None]:
    """One CPU thread (bit-for-bit determinism: one thread fixes every reduction order), and new
    tensors made on `device`."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _placed_on(device):
            yield
    finally:
        torch.set_num_threads(previous)


def _device_of(inputs: dict[str, Any]) -> torch.device:
    return inputs["q"].device


def make_inputs(case: Case, seed: int, device: str = "cpu") -> dict[str, Any]:
    """Every input of the ABI for `case`, drawn with `seed` (spec: "How the judge makes a case").

    On `device` (torch's generator of that device: the bytes differ from the CPU's, but are the
    same on every call with the same device, case and seed).
    """
    sz = sizes(case)
    unknown = set(case.flags) - FLAGS
    if unknown:
        raise ValueError(f"case {case.name}: unknown flags {sorted(unknown)} (known: {sorted(FLAGS)})")
    dtype = DTYPES[case.dtype]
    shapes = {
        "q": (sz.B, sz.S1, sz.N1, sz.D),
        "q_rope": (sz.B, sz.S1, sz.N1, sz.Dr),
        "k": (sz.B, sz.S2, sz.N2, sz.D),
        "k_rope": (sz.B, sz.S2, sz.N2, sz.Dr),
        "v": (sz.B, sz.S2, sz.N2, sz.D),
        "d_out": (sz.B, sz.S1, sz.N1, sz.D),
    }
    with _single_thread_on(device):
        gen = torch.Generator(device=device).manual_seed(int(seed))
        inputs: dict[str, Any] = {}
        for name in NORMAL_INPUTS:
            if name in ROPE_NAMES and sz.Dr == 0:
                inputs[name] = None
                continue
            inputs[name] = torch.randn(shapes[name], generator=gen).to(dtype)
        if VALUE_IS_KEY in case.flags:  # v is still drawn, so d_out and the indices stay the unflagged ones
            inputs["v"] = inputs["k"].clone()
        indices = draw_indices(sz, gen, ragged=RAGGED_TOPK in case.flags, contract=CONTRACT_INDICES in case.flags)
        out, softmax_max, softmax_sum = forward(sz, inputs, indices)
    inputs["sparse_indices"] = indices
    inputs["out"] = out.to(dtype)
    inputs["softmax_max"] = softmax_max
    inputs["softmax_sum"] = softmax_sum
    inputs["scale"] = sz.scale
    return inputs


def output_specs(case: Case, inputs: dict[str, Any]) -> dict[str, tuple[tuple[int, ...], Any]]:
    """dq, dq_rope, dk, dk_rope, dv: each the shape and dtype of its input (rope ones absent when Dr = 0)."""
    sz = sizes(case)
    dtype = DTYPES[case.dtype]
    specs = {
        "dq": ((sz.B, sz.S1, sz.N1, sz.D), dtype),
        "dq_rope": ((sz.B, sz.S1, sz.N1, sz.Dr), dtype),
        "dk": ((sz.B, sz.S2, sz.N2, sz.D), dtype),
        "dk_rope": ((sz.B, sz.S2, sz.N2, sz.Dr), dtype),
        "dv": ((sz.B, sz.S2, sz.N2, sz.D), dtype),
    }
    if sz.Dr == 0:
        del specs["dq_rope"], specs["dk_rope"]
    return specs


def oracle(case: Case, inputs: dict[str, Any]) -> dict[str, torch.Tensor]:
    """G: every output in float64, from the very inputs the kernel got.

    Runs on the inputs' device, with the caller's torch threads on the CPU: the judge gives it
    one thread on shared hosts (there two-thread kernels were up to 20x slower whenever the
    other core was busy, docs/benchmarks.md "Oracle"), and every core on NPU hosts, whose
    benchmark cases would take minutes on one. The pass rule does not need G's last bits.
    """
    with _placed_on(_device_of(inputs)):
        return backward(sizes(case), inputs, mode="oracle")


def reference(case: Case, inputs: dict[str, Any]) -> dict[str, torch.Tensor] | None:
    """R for float16/bfloat16 cases (the spec's float32 recipe, rounded to T); None for float32."""
    if case.dtype == "float32":
        return None
    with _placed_on(_device_of(inputs)):
        return backward(sizes(case), inputs, mode="reference", out_dtype=DTYPES[case.dtype])


def check(
    case: Case,
    outputs: dict[str, Any],
    oracle: dict[str, Any],
    reference: dict[str, Any] | None,
) -> dict[str, OutputCheck]:
    """The spec's pass rule for each output X (keys of `oracle`), with its metrics for the report."""
    tol = _tolerance()[case.dtype]
    results = {}
    for name, truth in oracle.items():
        x = outputs[name]
        stats = error_stats(x, truth, floor=tol["mere_floor"], rtol=tol["mixed_tol"], atol=tol["mixed_tol"])
        if case.dtype == "float32":
            allowed_abs = tol["abs_factor"] * max(1.0, stats.max_abs_truth)
            allowed_mere = tol["mere"]
        else:
            if reference is None:
                raise ValueError(f"{case.dtype} case {case.name} needs the reference R")
            ref = error_stats(
                reference[name], truth, floor=tol["mere_floor"], rtol=tol["mixed_tol"], atol=tol["mixed_tol"]
            )
            allowed_abs = tol["ref_factor"] * ref.max_abs_err + tol["atol"]
            allowed_mere = tol["mere_ref_factor"] * ref.mere + tol["mere_slack"]
        reasons = []
        if not stats.finite:
            reasons.append(nonfinite_reason(stats.nan, stats.inf, first=stats.first_nonfinite, count=stats.count))
        if stats.max_abs_err > allowed_abs:
            reasons.append(f"max |X-G| = {fmt(stats.max_abs_err)} exceeds {fmt(allowed_abs)}")
        if stats.mere > allowed_mere:
            reasons.append(f"MERE = {fmt(stats.mere)} exceeds {fmt(allowed_mere)}")
        results[name] = OutputCheck(
            passed=not reasons,
            max_abs_err=stats.max_abs_err,
            mere=stats.mere,
            mare=stats.mare,
            within_mixed_tol=stats.within_mixed_tol,
            allowed_abs_err=allowed_abs,
            allowed_mere=allowed_mere,
            reason=f"{name}: {'; '.join(reasons)}" if reasons else "",
        )
    return results


def work(case: Case, inputs: dict[str, Any]) -> tuple[float, float]:
    """(flops, least bytes): P * (6*(D+Dr) + 4*D) from the actual indices; inputs read, outputs written once.

    P counts the pairs of the generated indices, so ragged and causal cases get their true work.
    """
    sz = sizes(case)
    with _single_thread_on(inputs["sparse_indices"].device):
        pairs = count_pairs(sz, inputs["sparse_indices"])
    flops = float(pairs) * (6 * (sz.D + sz.Dr) + 4 * sz.D)
    read = sum(t.numel() * t.element_size() for t in inputs.values() if isinstance(t, torch.Tensor))
    written = sum(
        math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        for shape, dtype in output_specs(case, inputs).values()
    )
    return flops, float(read + written)
