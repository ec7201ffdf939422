/*
 * sfag_device.h: what the starter's three kernel files share: UB row copies, float conversions,
 * row sums, the workspace accumulators and each core's share of a flat range. Device code only:
 * included by sfag_zero_kernel.cpp, sfag_main_kernel.cpp and sfag_finalize_kernel.cpp, which
 * bisheng compiles one by one (CANN's ascendc_library takes one kernel function per kernel file).
 *
 * All arithmetic is float32; inputs are converted when they arrive in UB, outputs when they
 * leave it (round to nearest even).
 *
 * Every kernel ends with (GM_ADDR workspace, SfagTiling tiling): the judge builds with HAVE_WORKSPACE
 * and HAVE_TILING, so CANN's generated wrapper sets the system workspace from the base the host
 * passes and the kernel's `workspace` is the user part, SFAG_SYS_WORKSPACE_BYTES further on.
 *
 * UB layouts (all rows padded with zeros to whole 64-float vector repeats):
 *   "kq" rows: [ k (D) ... | k_rope (Dr) ... ]  L = dPad + drPad floats; q rows and dq rows alike
 *   "v"  rows: [ v (D) ... ]                   dPad floats; d_out rows are read from L-pitched rows
 *
 * NOT YET RUN ON NPU HARDWARE; see README.md.
 */
#ifndef SFAG_DEVICE_H
#define SFAG_DEVICE_H

#include <kernel_operator.h>

#include "sfag_tiling.h"
#include "sparse_flash_attention_grad.h"

using namespace AscendC;

namespace {

constexpr uint32_t BLOCK_BYTES = 32; // DataCopy works in 32-byte blocks of UB

__aicore__ inline uint32_t RoundUp(uint32_t value, uint32_t step) { return (value + step - 1) / step * step; }

// Gap between two rows in UB, in 32-byte blocks: rows of `payload` bytes every `pitch` bytes.
__aicore__ inline uint32_t UbGap(uint32_t pitch, uint32_t payload) {
    return (pitch - RoundUp(payload, BLOCK_BYTES)) / BLOCK_BYTES;
}

// rows x rowLen elements from GM (rows `srcGap` elements apart after each row's end) into UB rows
// `pitch` elements apart. The tail of each row's last 32-byte block is filled with zeros.
template <typename T>
__aicore__ inline void LoadRows(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint32_t rows,
                                uint32_t rowLen, uint32_t srcGap, uint32_t pitch) {
    uint32_t payload = rowLen * sizeof(T);
    DataCopyExtParams params{static_cast<uint16_t>(rows), payload, srcGap * static_cast<uint32_t>(sizeof(T)),
                             UbGap(pitch * sizeof(T), payload), 0};
    uint8_t tail = static_cast<uint8_t>((RoundUp(payload, BLOCK_BYTES) - payload) / sizeof(T));
    DataCopyPadExtParams<T> pad{true, 0, tail, static_cast<T>(0.0f)};
    DataCopyPad(dst, src, params, pad);
}

// rows x rowLen elements from UB rows `pitch` elements apart into GM rows `dstGap` elements apart.
template <typename T>
__aicore__ inline void StoreRows(const GlobalTensor<T> &dst, const LocalTensor<T> &src, uint32_t rows,
                                 uint32_t rowLen, uint32_t pitch, uint32_t dstGap) {
    uint32_t payload = rowLen * sizeof(T);
    DataCopyExtParams params{static_cast<uint16_t>(rows), payload, UbGap(pitch * sizeof(T), payload),
                             dstGap * static_cast<uint32_t>(sizeof(T)), 0};
    DataCopyPad(dst, src, params);
}

// Zero a UB tensor of any element type (Duplicate on its bit pattern).
template <typename T>
__aicore__ inline void ZeroFill(const LocalTensor<T> &dst, uint32_t count) {
    if constexpr (sizeof(T) == 2) {
        Duplicate(dst.template ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0), count);
    } else {
        Duplicate(dst.template ReinterpretCast<float>(), 0.0f, count);
    }
}

template <typename T>
__aicore__ inline void ToFloat(const LocalTensor<float> &dst, const LocalTensor<T> &src, uint32_t count) {
    if constexpr (IsSameType<T, float>::value) {
        DataCopy(dst, src, count);
    } else {
        Cast(dst, src, RoundMode::CAST_NONE, count); // exact: every half and bfloat16 is a float
    }
}

template <typename T>
__aicore__ inline void FromFloat(const LocalTensor<T> &dst, const LocalTensor<float> &src, uint32_t count) {
    if constexpr (IsSameType<T, float>::value) {
        DataCopy(dst, src, count);
    } else {
        Cast(dst, src, RoundMode::CAST_RINT, count); // round to nearest even, as the spec's rounding
    }
}

// dst[r] = sum of the first `chunks` 64-float pieces of row r of `src` (rows `pitch` floats apart).
__aicore__ inline void RowSums(const LocalTensor<float> &dst, const LocalTensor<float> &src,
                               const LocalTensor<float> &part, uint32_t rows, uint32_t pitch, uint32_t chunks,
                               uint32_t partPitch) {
    // part[c][r] = sum of piece c of row r: one WholeReduceSum per piece, a repeat per row.
    for (uint32_t c = 0; c < chunks; ++c) {
        WholeReduceSum(part[c * partPitch], src[c * SFAG_VEC_FLOATS], SFAG_VEC_FLOATS, rows, 1, 1, pitch / 8);
    }
    PipeBarrier<PIPE_V>();
    Adds(dst, part, 0.0f, rows);
    for (uint32_t c = 1; c < chunks; ++c) {
        PipeBarrier<PIPE_V>();
        Add(dst, dst, part[c * partPitch], rows);
    }
    PipeBarrier<PIPE_V>();
}

// dst[r] = dot(mat row r, vec) over `chunks` 64-float pieces; `prod` is scratch shaped like `mat`.
__aicore__ inline void RowDot(const LocalTensor<float> &dst, const LocalTensor<float> &mat,
                              const LocalTensor<float> &vec, const LocalTensor<float> &prod,
                              const LocalTensor<float> &part, uint32_t rows, uint32_t pitch, uint32_t chunks,
                              uint32_t partPitch) {
    // A repeat is one row's piece; src1's repeat stride 0 reuses the same piece of `vec` for every row.
    uint8_t stride = static_cast<uint8_t>(pitch / 8);
    for (uint32_t c = 0; c < chunks; ++c) {
        Mul(prod[c * SFAG_VEC_FLOATS], mat[c * SFAG_VEC_FLOATS], vec[c * SFAG_VEC_FLOATS],
            static_cast<uint64_t>(SFAG_VEC_FLOATS), static_cast<uint8_t>(rows),
            BinaryRepeatParams(1, 1, 1, stride, stride, 0));
    }
    PipeBarrier<PIPE_V>();
    RowSums(dst, prod, part, rows, pitch, chunks, partPitch);
}

// The accumulators in the workspace: float rows of D, Dr and D values, like dk, dk_rope and dv.
struct Accumulators {
    GlobalTensor<float> dk, dkr, dv;

    __aicore__ inline void Init(GM_ADDR workspace, const SfagTiling &t) {
        dk.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + t.accDkOffset), t.accRows * t.D);
        dv.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + t.accDvOffset), t.accRows * t.D);
        if (t.Dr > 0) {
            dkr.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + t.accDkrOffset), t.accRows * t.Dr);
        }
    }
};

// One core's share [begin, end) of `total` elements, in whole vector repeats.
__aicore__ inline void ShareOf(int64_t total, int64_t &begin, int64_t &end) {
    int64_t per = (total + GetBlockNum() - 1) / GetBlockNum();
    per = (per + SFAG_VEC_FLOATS - 1) / SFAG_VEC_FLOATS * SFAG_VEC_FLOATS;
    begin = per * GetBlockIdx();
    end = begin + per < total ? begin + per : total;
}

constexpr uint32_t FLAT_CHUNK = 4096; // elements per step of sfag_zero and sfag_finalize

} // namespace

#endif /* SFAG_DEVICE_H */
