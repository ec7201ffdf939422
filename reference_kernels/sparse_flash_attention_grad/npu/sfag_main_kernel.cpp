/*
 * sfag_main_kernel.cpp: the work. One work item = one query row (b, s) and a group of Hb query
 * heads of KV head n2: walk the row's selected tokens in chunks of Tc keys and
 *   CopyIn  : k|k_rope and v rows of the chunk  -> Unified Buffer (UB)
 *   Compute : scores, P, dP, dS; dq += dS k, and the chunk's dk, dv parts
 *   CopyOut : atomically add the chunk's dk|dk_rope, dv into the accumulators
 * then write dq|dq_rope of the row (each item owns its rows: no atomics).
 *
 * One kernel function in this file: CANN's ascendc_library supports one per kernel file. The host
 * (sfag_host.cpp) launches it through the launcher CANN generates, aclrtlaunch_sfag_main.
 * NOT YET RUN ON NPU HARDWARE; see README.md.
 */
#include "sfag_device.h"

namespace {

struct SfagInputs {
    GM_ADDR q, qr, k, kr, v, indices, dout, out, softmaxMax, softmaxSum, dq, dqr, workspace;
};

template <typename T>
class SfagMain {
public:
    __aicore__ inline void Init(const SfagInputs &in, const SfagTiling &tiling) {
        t = tiling;
        hb = static_cast<uint32_t>(t.headsPerItem);
        tc = static_cast<uint32_t>(t.tokensPerChunk);
        dPad = static_cast<uint32_t>(t.dPad);
        L = static_cast<uint32_t>(t.dPad + t.drPad);
        rp = static_cast<uint32_t>(t.rowPad);
        qGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.q));
        kGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.k));
        vGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.v));
        doutGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.dout));
        outGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.out));
        dqGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.dq));
        if (t.Dr > 0) {
            qrGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.qr));
            krGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.kr));
            dqrGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(in.dqr));
        }
        idxGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(in.indices));
        maxGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(in.softmaxMax));
        sumGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(in.softmaxSum));
        acc.Init(in.workspace, t);

        uint32_t most = tc > hb ? tc : hb;
        pipe.InitBuffer(kqIn, 1, tc * L * sizeof(T));
        pipe.InitBuffer(vIn, 1, tc * dPad * sizeof(T));
        pipe.InitBuffer(headIn, 1, hb * L * sizeof(T));
        pipe.InitBuffer(dkOut, 1, tc * L * sizeof(float));
        pipe.InitBuffer(dvOut, 1, tc * dPad * sizeof(float));
        pipe.InitBuffer(dqOut, 1, hb * L * sizeof(T));
        pipe.InitBuffer(kqBuf, tc * L * sizeof(float));
        pipe.InitBuffer(vBuf, tc * dPad * sizeof(float));
        pipe.InitBuffer(prodBuf, most * L * sizeof(float));
        pipe.InitBuffer(qBuf, hb * L * sizeof(float));
        pipe.InitBuffer(doBuf, hb * L * sizeof(float));
        pipe.InitBuffer(dqBuf, hb * L * sizeof(float));
        pipe.InitBuffer(partBuf, (L / SFAG_VEC_FLOATS) * rp * sizeof(float));
        pipe.InitBuffer(smallBuf, 5 * rp * sizeof(float));
        kqF = kqBuf.Get<float>();
        vF = vBuf.Get<float>();
        prod = prodBuf.Get<float>();
        qF = qBuf.Get<float>();
        doF = doBuf.Get<float>();
        dqAcc = dqBuf.Get<float>();
        part = partBuf.Get<float>();
        LocalTensor<float> small = smallBuf.Get<float>();
        z = small;
        p = small[rp];
        dp = small[2 * rp];
        ds = small[3 * rp];
        delta = small[4 * rp];
        // The staging buffers' padding must read as zero forever: zero them once; the loads
        // below only ever write the data part of each row (plus zeros to the 32-byte boundary).
        ZeroStage(kqIn, tc * L);
        ZeroStage(vIn, tc * dPad);
        ZeroStage(headIn, hb * L);
    }

    __aicore__ inline void Process() {
        for (int64_t item = GetBlockIdx(); item < t.items; item += GetBlockNum()) {
            ProcessItem(item);
        }
    }

private:
    template <typename Q>
    __aicore__ inline void ZeroStage(Q &queue, uint32_t count) {
        LocalTensor<T> stage = queue.template AllocTensor<T>();
        ZeroFill(stage, count);
        queue.FreeTensor(stage); // the next AllocTensor (for a load) waits for this write
    }

    __aicore__ inline void ProcessItem(int64_t item) {
        int64_t groups = t.G / hb;
        hgroup = item % groups;
        n2 = (item / groups) % t.N2;
        s = (item / groups / t.N2) % t.S1;
        b = item / groups / t.N2 / t.S1;
        int64_t threshold = t.S2;
        if (t.sparseMode == 3) {
            threshold = t.S2 - t.S1 + s + 1;
            threshold = threshold < 0 ? 0 : (threshold > t.S2 ? t.S2 : threshold);
        }
        LoadHeads();
        Duplicate(dqAcc, 0.0f, hb * L);
        PipeBarrier<PIPE_V>();
        // Walk the valid prefix of the row's block list; cut each block at the threshold. The index
        // contract (problem spec) and nothing more: the list ends at the first -1 (what follows is
        // junk), its ids come in any order, and block nblk(s)-1 need not be there, so every block is
        // cut at the threshold, whichever it is, and chunks are atomically added key row by key row.
        segments = 0;
        tokens = 0;
        int64_t rowBase = ((b * t.S1 + s) * t.N2 + n2) * t.K;
        for (int64_t i = 0; i < t.K; ++i) {
            int64_t id = idxGm.GetValue(rowBase + i);
            if (id < 0) { // -1 ends the list; no other negative comes before it
                break;
            }
            int64_t start = id * t.blockSize;
            int64_t end = start + t.blockSize < threshold ? start + t.blockSize : threshold;
            while (start < end) {
                int64_t room = static_cast<int64_t>(tc - tokens);
                int64_t take = end - start < room ? end - start : room;
                segStart[segments] = start;
                segLen[segments] = static_cast<uint32_t>(take);
                segRow[segments] = tokens;
                ++segments;
                tokens += static_cast<uint32_t>(take);
                start += take;
                if (tokens == tc) {
                    RunChunk();
                }
            }
        }
        if (tokens > 0) {
            RunChunk();
        }
        WriteDq();
    }

    // q|q_rope and d_out rows of the item's heads, Delta = d_out . out, and the softmax statistics.
    __aicore__ inline void LoadHeads() {
        int64_t headRow = (b * t.S1 + s) * t.N1 + n2 * t.G + hgroup * hb; // first query head's row
        LocalTensor<T> stage = headIn.AllocTensor<T>();
        LoadRows(stage, qGm[headRow * t.D], hb, t.D, 0, L);
        if (t.Dr > 0) {
            LoadRows(stage[dPad], qrGm[headRow * t.Dr], hb, t.Dr, 0, L);
        }
        headIn.EnQue(stage);
        stage = headIn.DeQue<T>();
        ToFloat(qF, stage, hb * L);
        headIn.FreeTensor(stage);

        stage = headIn.AllocTensor<T>();
        LoadRows(stage, doutGm[headRow * t.D], hb, t.D, 0, L);
        headIn.EnQue(stage);
        stage = headIn.DeQue<T>();
        ToFloat(doF, stage, hb * L);
        headIn.FreeTensor(stage);

        stage = headIn.AllocTensor<T>();
        LoadRows(stage, outGm[headRow * t.D], hb, t.D, 0, L);
        headIn.EnQue(stage);
        stage = headIn.DeQue<T>();
        ToFloat(prod, stage, hb * L);
        headIn.FreeTensor(stage);
        PipeBarrier<PIPE_V>();
        Mul(prod, prod, doF, hb * L); // the q_rope part of these rows is stale but not summed
        PipeBarrier<PIPE_V>();
        RowSums(delta, prod, part, hb, L, dPad / SFAG_VEC_FLOATS, rp);
        PipeBarrier<PIPE_ALL>(); // scalar reads of delta follow
        int64_t statBase = ((b * t.N2 + n2) * t.S1 + s) * t.G + hgroup * hb;
        for (uint32_t i = 0; i < hb; ++i) {
            deltaS[i] = delta.GetValue(i);
            rowMax[i] = maxGm.GetValue(statBase + i);
            float sum = sumGm.GetValue(statBase + i);
            invSum[i] = sum > 0.0f ? 1.0f / sum : 0.0f; // rows that see nothing have sum 0 and no keys
        }
    }

    __aicore__ inline void RunChunk() {
        CopyIn();
        Compute();
        CopyOut();
        segments = 0;
        tokens = 0;
    }

    // k|k_rope and v rows of the chunk's tokens: a segment is a run of consecutive keys.
    __aicore__ inline void CopyIn() {
        LocalTensor<T> kq = kqIn.AllocTensor<T>();
        LocalTensor<T> vv = vIn.AllocTensor<T>();
        for (uint32_t g = 0; g < segments; ++g) {
            int64_t keyRow = (b * t.S2 + segStart[g]) * t.N2 + n2;
            uint32_t gap = static_cast<uint32_t>((t.N2 - 1) * t.D); // other KV heads sit between rows
            LoadRows(kq[segRow[g] * L], kGm[keyRow * t.D], segLen[g], t.D, gap, L);
            LoadRows(vv[segRow[g] * dPad], vGm[keyRow * t.D], segLen[g], t.D, gap, dPad);
            if (t.Dr > 0) {
                uint32_t gapR = static_cast<uint32_t>((t.N2 - 1) * t.Dr);
                LoadRows(kq[segRow[g] * L + dPad], krGm[keyRow * t.Dr], segLen[g], t.Dr, gapR, L);
            }
        }
        kqIn.EnQue(kq);
        vIn.EnQue(vv);
    }

    __aicore__ inline void Compute() {
        LocalTensor<T> kq = kqIn.DeQue<T>();
        LocalTensor<T> vv = vIn.DeQue<T>();
        ToFloat(kqF, kq, tc * L);
        ToFloat(vF, vv, tc * dPad);
        kqIn.FreeTensor(kq);
        vIn.FreeTensor(vv);
        LocalTensor<float> dk = dkOut.AllocTensor<float>();
        LocalTensor<float> dv = dvOut.AllocTensor<float>();
        Duplicate(dk, 0.0f, tc * L);
        Duplicate(dv, 0.0f, tc * dPad);
        PipeBarrier<PIPE_V>();
        uint32_t n = tokens;
        float scale = t.scale;
        for (uint32_t i = 0; i < hb; ++i) {
            LocalTensor<float> qi = qF[i * L];
            LocalTensor<float> doi = doF[i * L];
            // z = scale * (q . k + q_rope . k_rope);  P = exp(z - max) / sum
            RowDot(z, kqF, qi, prod, part, n, L, L / SFAG_VEC_FLOATS, rp);
            Muls(z, z, scale, n);
            PipeBarrier<PIPE_V>();
            Adds(z, z, -rowMax[i], n);
            PipeBarrier<PIPE_V>();
            Exp(z, z, n);
            PipeBarrier<PIPE_V>();
            Muls(p, z, invSum[i], n);
            // dS = P * (d_out . v - Delta)
            RowDot(dp, vF, doi, prod, part, n, dPad, dPad / SFAG_VEC_FLOATS, rp);
            Adds(dp, dp, -deltaS[i], n);
            PipeBarrier<PIPE_V>();
            Mul(ds, p, dp, n);
            PipeBarrier<PIPE_ALL>(); // the scalar reads of P and dS below wait for the vector unit
            for (uint32_t r = 0; r < n; ++r) {
                float pr = p.GetValue(r);
                float dsr = ds.GetValue(r);
                Axpy(dqAcc[i * L], kqF[r * L], dsr, L);     // dq|dq_rope += dS * k|k_rope
                Axpy(dk[r * L], qi, dsr * scale, L);        // dk|dk_rope += scale * dS * q|q_rope
                Axpy(dv[r * dPad], doi, pr, dPad);          // dv += P * d_out
                PipeBarrier<PIPE_V>();
            }
        }
        dkOut.EnQue(dk);
        dvOut.EnQue(dv);
    }

    // Add the chunk's dk|dk_rope and dv rows into the accumulators (other cores add to them too).
    __aicore__ inline void CopyOut() {
        LocalTensor<float> dk = dkOut.DeQue<float>();
        LocalTensor<float> dv = dvOut.DeQue<float>();
        uint32_t gap = static_cast<uint32_t>((t.N2 - 1) * t.D);
        uint32_t gapR = static_cast<uint32_t>((t.N2 - 1) * t.Dr);
        SetAtomicAdd<float>();
        for (uint32_t g = 0; g < segments; ++g) {
            int64_t keyRow = (b * t.S2 + segStart[g]) * t.N2 + n2;
            StoreRows(acc.dk[keyRow * t.D], dk[segRow[g] * L], segLen[g], t.D, L, gap);
            StoreRows(acc.dv[keyRow * t.D], dv[segRow[g] * dPad], segLen[g], t.D, dPad, gap);
            if (t.Dr > 0) {
                StoreRows(acc.dkr[keyRow * t.Dr], dk[segRow[g] * L + dPad], segLen[g], t.Dr, L, gapR);
            }
        }
        SetAtomicNone();
        dkOut.FreeTensor(dk);
        dvOut.FreeTensor(dv);
    }

    // dq|dq_rope = scale * accumulated sums, in the output dtype; this item owns these rows.
    __aicore__ inline void WriteDq() {
        Muls(dqAcc, dqAcc, t.scale, hb * L);
        PipeBarrier<PIPE_V>();
        LocalTensor<T> o = dqOut.AllocTensor<T>();
        FromFloat(o, dqAcc, hb * L);
        dqOut.EnQue(o);
        o = dqOut.DeQue<T>();
        int64_t headRow = (b * t.S1 + s) * t.N1 + n2 * t.G + hgroup * hb;
        StoreRows(dqGm[headRow * t.D], o, hb, t.D, L, 0);
        if (t.Dr > 0) {
            StoreRows(dqrGm[headRow * t.Dr], o[dPad], hb, t.Dr, L, 0);
        }
        dqOut.FreeTensor(o);
    }

    SfagTiling t;
    uint32_t hb, tc, dPad, L, rp;
    int64_t b, s, n2, hgroup;
    GlobalTensor<T> qGm, qrGm, kGm, krGm, vGm, doutGm, outGm, dqGm, dqrGm;
    GlobalTensor<int32_t> idxGm;
    GlobalTensor<float> maxGm, sumGm;
    Accumulators acc;
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> kqIn, vIn, headIn;
    TQue<QuePosition::VECOUT, 1> dkOut, dvOut, dqOut;
    TBuf<TPosition::VECCALC> kqBuf, vBuf, prodBuf, qBuf, doBuf, dqBuf, partBuf, smallBuf;
    LocalTensor<float> kqF, vF, prod, qF, doF, dqAcc, part, z, p, dp, ds, delta;
    // The chunk: `segments` runs of consecutive keys, `tokens` rows in all.
    int64_t segStart[SFAG_MAX_TOKENS_PER_CHUNK];
    uint32_t segLen[SFAG_MAX_TOKENS_PER_CHUNK];
    uint32_t segRow[SFAG_MAX_TOKENS_PER_CHUNK];
    uint32_t segments, tokens;
    float deltaS[SFAG_MAX_HEADS_PER_ITEM], rowMax[SFAG_MAX_HEADS_PER_ITEM], invSum[SFAG_MAX_HEADS_PER_ITEM];
};

} // namespace

extern "C" __global__ __aicore__ void sfag_main(GM_ADDR q, GM_ADDR qr, GM_ADDR k, GM_ADDR kr, GM_ADDR v,
                                                GM_ADDR indices, GM_ADDR dout, GM_ADDR out, GM_ADDR softmaxMax,
                                                GM_ADDR softmaxSum, GM_ADDR dq, GM_ADDR dqr, GM_ADDR workspace,
                                                SfagTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    SfagInputs in{q, qr, k, kr, v, indices, dout, out, softmaxMax, softmaxSum, dq, dqr, workspace};
    if (tiling.dtype == KERNEL_F16) {
        SfagMain<half> op;
        op.Init(in, tiling);
        op.Process();
    } else if (tiling.dtype == KERNEL_BF16) {
        SfagMain<bfloat16_t> op;
        op.Init(in, tiling);
        op.Process();
    } else {
        SfagMain<float> op;
        op.Init(in, tiling);
        op.Process();
    }
}
