// lnmod_fwd_v2_odd.cuh -- the odd kernel of dtile's forward v2 (included inside namespace fv2
// by lnmod_fwd_v2_kern.cuh): any D and any pointers aligned to their element size. A CTA of W
// warps owns a row at a time; the row is read as the 16-byte windows of x at absolute addresses that
// cover it (a row that starts `phase` elements into a window is shifted by that much; the
// elements of the neighbouring rows in its first and last window are masked), streamed
// through a ring of NS slots with cp.async; the two windows of the whole tensor that stick
// out of it are read element by element. Thread t owns windows t, t+T, ... of the row.
// Statistics: one pass around lane 0's first element (a second around the pass's mean when
// that pivot was far), per-warp counts (they change with the phase), one barrier a row;
// modulation through the read-only cache an element at a time; y by 16-byte stores where
// a window lies wholly in the row and y's address is aligned, else element by element.

template <typename TX> struct odd_row {
    static constexpr int VEC = dt<TX>::VEC;
    int64_t phase, nw;  // elements of the first window before the row; windows of the row
    uintptr_t first;    // address of the row's first window
    __device__ __forceinline__ odd_row(const lnmod_kparams &p, int64_t r)
    {
        const uintptr_t a = (uintptr_t)p.x + (uintptr_t)(r * p.D) * sizeof(TX);
        phase = (int64_t)((a & 15u) / sizeof(TX));
        first = a & ~(uintptr_t)15u;
        nw = fv2_odd_windows(p.D, VEC, phase);
    }
    // Elements [e0, e1) of window w belong to the row.
    __device__ __forceinline__ void span(int64_t w, int64_t D, int *e0, int *e1) const
    {
        const int64_t j0 = fv2_odd_elem(VEC, phase, w, 0);
        *e0 = j0 < 0 ? (int)-j0 : 0;
        *e1 = j0 + VEC > D ? (int)(D - j0) : VEC;
    }
};

template <typename TX>
__device__ __forceinline__ void odd_issue(const lnmod_kparams &p, const kcfg &k, uint4 *slot, int64_t r)
{
    const odd_row<TX> R(p, r);
    const uintptr_t lo = (uintptr_t)p.x, hi = lo + (uintptr_t)(p.rows * p.D) * sizeof(TX);
    for (int q = 0; q < k.vpt; q++) {
        const int64_t w = threadIdx.x + (int64_t)q * blockDim.x;
        if (w >= R.nw) break;
        const uintptr_t a = R.first + (uintptr_t)w * 16u;
        if (a >= lo && a + 16 <= hi) {
            lnmod_cp_async16(slot + q * blockDim.x + threadIdx.x, reinterpret_cast<const void *>(a));
        } else { // a window of the tensor's edge: only the elements inside it
            union {
                uint4 u;
                TX e[dt<TX>::VEC];
            } tmp;
            tmp.u = make_uint4(0, 0, 0, 0);
            for (int e = 0; e < dt<TX>::VEC; e++) {
                const uintptr_t ea = a + (uintptr_t)e * sizeof(TX);
                if (ea >= lo && ea < hi) tmp.e[e] = *reinterpret_cast<const TX *>(ea);
            }
            slot[q * blockDim.x + threadIdx.x] = tmp.u; // read back by this thread only
        }
    }
}

// The warp's part of row R held in slot (windows of this thread).
template <typename TX>
__device__ __forceinline__ part4 odd_stats(const lnmod_kparams &p, const kcfg &k, const uint4 *slot,
                                           const odd_row<TX> &R)
{
    constexpr int VEC = dt<TX>::VEC;
    const int warp = threadIdx.x >> 5;
    int mine = 0;
    for (int q = 0; q < k.vpt; q++) {
        const int64_t w = threadIdx.x + (int64_t)q * blockDim.x;
        if (w >= R.nw) break;
        int e0, e1;
        R.span(w, p.D, &e0, &e1);
        mine += e1 - e0;
    }
    const float nw = (float)lnmod_warp_sum_i64(mine);
    // Pivot: the first element of the row in lane 0's first window (the warp's lowest).
    const int64_t w0 = (int64_t)warp * 32;
    float f[VEC];
    dt<TX>::unpack(lnmod_lds16(slot + threadIdx.x), f);
    int e00, e01; // e01 unused: lane 0's first window holds a row element at e00
    R.span(w0, p.D, &e00, &e01);
    float x0 = f[0];
#pragma unroll
    for (int e = 1; e < VEC; e++) // a select, not an indexed (local-memory) read
        if (e == e00) x0 = f[e];
    float hw = __shfl_sync(0xffffffffu, x0, 0);
    float cc = 0.0f, qq = 0.0f;
    for (int pass = 0; pass < 2; pass++) {
        float a = 0.0f, b = 0.0f;
        for (int q = 0; q < k.vpt; q++) {
            const int64_t w = threadIdx.x + (int64_t)q * blockDim.x;
            if (w >= R.nw) break;
            int e0, e1;
            R.span(w, p.D, &e0, &e1);
            dt<TX>::unpack(lnmod_lds16(slot + q * blockDim.x + threadIdx.x), f);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                if (e >= e0 && e < e1) {
                    const float d = f[e] - hw;
                    a += d;
                    b = fmaf(d, d, b);
                }
        }
        lnmod_warp_sum2(a, b);
        cc = a;
        qq = b;
        const float lw = nw > 0.0f ? cc / nw : 0.0f;
        if (pass == 1 || !(cc * lw > 0.888f * qq)) break;
        hw += lw; // the pivot was far from the mean: once more around hw + lw
    }
    return make_part(hw, cc, qq, nw);
}

template <typename TX, typename TM, typename TY>
__device__ __forceinline__ void odd_output(const lnmod_kparams &p, const kcfg &k, const uint4 *slot,
                                           const odd_row<TX> &R, int64_t r, float hi, float lo, float rs)
{
    constexpr int VEC = dt<TX>::VEC;
    const int64_t m = lnmod_mod_row(p, r);
    const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride;
    const TM *sh = static_cast<const TM *>(p.shift) + m * p.shift_stride;
    TY *yr = static_cast<TY *>(p.y) + r * p.D;
    const float nlr = -lo * rs;
    for (int q = 0; q < k.vpt; q++) {
        const int64_t w = threadIdx.x + (int64_t)q * blockDim.x;
        if (w >= R.nw) break;
        int e0, e1;
        R.span(w, p.D, &e0, &e1);
        const int64_t j0 = fv2_odd_elem(VEC, R.phase, w, 0);
        float f[VEC], o[VEC];
        dt<TX>::unpack(lnmod_lds16(slot + q * blockDim.x + threadIdx.x), f);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            if (e >= e0 && e < e1) {
                const float gs = 1.0f + dt<TM>::to_f(__ldg(sc + j0 + e)), bs = dt<TM>::to_f(__ldg(sh + j0 + e));
                o[e] = fmaf(fmaf(f[e] - hi, rs, nlr), gs, bs);
            } else {
                o[e] = 0.0f;
            }
        if (e0 == 0 && e1 == VEC && ((uintptr_t)(yr + j0) & 15u) == 0) {
            lnmod_store_n<TY, VEC>(yr + j0, o);
        } else {
#pragma unroll
            for (int e = 0; e < VEC; e++)
                if (e >= e0 && e < e1) yr[j0 + e] = dt<TY>::from_f(o[e]);
        }
    }
}

template <typename TX, typename TM, typename TY>
__global__ void __launch_bounds__(512, 1) odd_kernel(lnmod_kparams p, kcfg k)
{
#ifdef FV2_EMU
    part4(*parts)[16] = reinterpret_cast<part4(*)[16]>(emu::static_smem());
#else
    __shared__ part4 parts[2][16];
#endif
    const int warp = threadIdx.x >> 5, W = blockDim.x >> 5;
    const int words = k.vpt * blockDim.x;
    const int64_t n = blockIdx.x < p.rows ? (p.rows - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    const int PD = k.NS - 1;
    for (int s = 0; s < PD; s++) {
        if (s < n) odd_issue<TX>(p, k, fv2_smem + (int64_t)s * words, blockIdx.x + s * (int64_t)gridDim.x);
        lnmod_cp_commit();
    }
    int si = 0, sn = PD % k.NS; // slots of rows i and i + PD (counters, no 64-bit remainders)
    for (int64_t i = 0; i < n; i++) {
        cp_wait_rt(PD - 1);
        const int64_t r = blockIdx.x + i * gridDim.x;
        if (i + PD < n) odd_issue<TX>(p, k, fv2_smem + (int64_t)sn * words, r + PD * (int64_t)gridDim.x);
        lnmod_cp_commit();
        const uint4 *slot = fv2_smem + (int64_t)si * words;
        si = si + 1 == k.NS ? 0 : si + 1;
        sn = sn + 1 == k.NS ? 0 : sn + 1;
        const odd_row<TX> R(p, r);
        const part4 pt = odd_stats<TX>(p, k, slot, R);
        const int par = (int)(i & 1);
        if ((threadIdx.x & 31) == 0) parts[par][warp] = pt;
        __syncthreads(); // one barrier a row; the parts alternate with the row's parity
        float hi, lo, rs;
        merge_parts(parts[par], W, (float)p.D, p.eps, &hi, &lo, &rs);
        if (threadIdx.x == 0) {
            if (p.mean) p.mean[r] = hi + lo;
            if (p.rstd) p.rstd[r] = rs;
        }
        odd_output<TX, TM, TY>(p, k, slot, R, r, hi, lo, rs);
    }
}
