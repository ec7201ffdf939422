"""sparse_flash_attention_grad: the forward (for `out` and the softmax statistics) and the backward
(G in float64, R by the spec's float32 recipe), gathered by row chunks or dense where cheaper."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import layout
from .layout import Sizes, blocked, chunks, thresholds, unblocked, valid_prefix


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
    k = blocked(sz, _cat_rope(inputs["k"], inputs["k_rope"], f32))
    v = blocked(sz, inputs["v"].to(f32))
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
    step = max(1, layout.CHUNK_ELEMENTS // max(1, 4 * sz.G * sz.S2))
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
    valid = valid_prefix(ids)
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
    step = max(1, layout.CHUNK_ELEMENTS // max(1, 2 * sz.G * sz.S2))
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
    k = blocked(sz, _cat_rope(inputs["k"], inputs["k_rope"], acc))
    v = blocked(sz, inputs["v"].to(acc))
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
    dk_full = unblocked(sz, dk)
    result = {
        "dq": dq[..., : sz.D].reshape(sz.B, sz.S1, sz.N1, sz.D),
        "dk": dk_full[..., : sz.D],
        "dv": unblocked(sz, dv),
    }
    if sz.Dr:
        result["dq_rope"] = dq[..., sz.D :].reshape(sz.B, sz.S1, sz.N1, sz.Dr)
        result["dk_rope"] = dk_full[..., sz.D :]
    return {name: t.to(final).contiguous() for name, t in result.items()}
