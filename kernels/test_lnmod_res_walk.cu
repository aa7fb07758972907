// test_lnmod_res_walk.cu -- host test (no GPU needed) of the fused op's bulk-backward plan as the
// library computes it (lnmod_res_common.cu: res_bulk_walk, res_bulk_norm_fin, res_ws_of;
// lnmod_res_bwd_bulk.cu: res_bwd_bulk_shape), at the modulate sites and the affine one, over
// samples, frames (a short last frame among them) and tokens:
//   * the walk's chunks hold every row exactly once, each chunk within one modulation group
//     (one gate row: the rows a chunk's dgate and, under MODULATE, dscale/dshift belong to);
//   * the norm's finalize reads every chunk that holds rows of each norm row: under MODULATE the
//     walk's own groups, under AFFINE one group of all the walk's chunks (every one of which
//     holds a row -- res_bwd_bulk_shape refuses a plan with an empty chunk);
//   * the workspace holds the partials the bulk kernel writes (norm: 2 rows a chunk where its
//     finalize adds several, gate: 1 row a chunk where a gate row has several chunks);
//   * per token, and a short last frame that empties chunks, keep the affine site off the ring.
// Exit 0: all held. Built with LNMOD_RES_WALK_PLANT (the affine finalize over the first group's
// chunks only, as under MODULATE): test lnmod_res_walk_planted, which must fail.
#include <cstdio>
#include <vector>

#include "lnmod_res_common.cuh"
#include "lnmod_res_variants.cuh"

using namespace lnmod_res_detail;

static int fails;
#define EXPECT(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c) && fails++ < 12) {                                                                                    \
            std::printf("test_lnmod_res_walk: FAIL line %d: ", __LINE__);                                             \
            std::printf(__VA_ARGS__);                                                                                  \
            std::printf("\n");                                                                                         \
        }                                                                                                              \
    } while (0)

static lnmod_res_desc desc(int64_t D, int64_t S, int64_t B, int64_t L, lnmod_layout lay, lnmod_res_norm norm)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = S * B;
    d.D = D;
    d.rows_per_sample = S;
    d.frame_len = L;
    d.layout = lay;
    d.gate = LNMOD_RES_GATE;
    d.norm = norm;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * D;
    return d;
}

// The finalize's plan as the library hands it to res_finalize (the planted bug: MODULATE's).
static lnmod_bparams norm_fin(const lnmod_res_desc *d, const lnmod_bparams &w)
{
#ifdef LNMOD_RES_WALK_PLANT
    (void)d;
    return w;
#else
    return res_bulk_norm_fin(d, w);
#endif
}

static void check(const lnmod_res_desc &d, const char *what)
{
    const lnmod_bparams w = res_bulk_walk(&d);
    const lnmod_desc md = lnmod_res_map_desc(&d);
    std::vector<unsigned char> seen((size_t)d.rows, 0);
    bool empty = false;
    for (int64_t c = 0; c < w.nchunks; c++) {
        int64_t g, r0, n;
        lnmod_chunk_rows(w, c, &g, &r0, &n);
        empty = empty || n == 0;
        for (int64_t j = 0; j < n; j++) {
            const int64_t r = r0 + j * w.cpg;
            EXPECT(r >= 0 && r < d.rows && !seen[(size_t)r], "%s: chunk %lld row %lld", what, (long long)c, (long long)r);
            if (r < 0 || r >= d.rows) continue;
            seen[(size_t)r]++;
            EXPECT(lnmod_mod_index(&md, r) == g, "%s: row %lld of gate row %lld in chunk %lld of group %lld", what,
                   (long long)r, (long long)lnmod_mod_index(&md, r), (long long)c, (long long)g);
        }
    }
    int64_t miss = 0;
    for (size_t r = 0; r < seen.size(); r++) miss += !seen[r];
    EXPECT(miss == 0, "%s: %lld rows never walked", what, (long long)miss);
    const lnmod_bparams f = norm_fin(&d, w);
    // Which walk chunks the norm's finalize adds into norm row k (res_fin_kernel: group k's
    // chunks k*cpg .. k*cpg + min(len, cpg) - 1), against the chunks that hold rows of row k.
    std::vector<int> read((size_t)w.nchunks, 0);
    for (int64_t k = 0; k < f.ngroups; k++) {
        int64_t s, len;
        lnmod_group_rows(f, k, &s, &len);
        const int64_t nk = len < f.cpg ? len : f.cpg;
        for (int64_t c = k * f.cpg; c < k * f.cpg + nk; c++)
            if (c < w.nchunks) read[(size_t)c]++;
    }
    const bool final_in_kernel = f.cpg == 1;
    for (int64_t c = 0; c < w.nchunks && !final_in_kernel; c++) {
        int64_t g, r0, n;
        lnmod_chunk_rows(w, c, &g, &r0, &n);
        EXPECT(read[(size_t)c] == (n > 0 ? 1 : 0), "%s: chunk %lld (%lld rows) read %d times by the norm's finalize", what,
               (long long)c, (long long)n, read[(size_t)c]);
    }
    EXPECT(f.ngroups == lnmod_res_norm_rows(&d), "%s: the finalize writes %lld norm rows, not %lld", what,
           (long long)f.ngroups, (long long)lnmod_res_norm_rows(&d));
    const res_ws_layout ws = res_ws_of(&d);
    if (f.cpg > 1)
        EXPECT(ws.gate - ws.norm >= w.nchunks * 8 * d.D, "%s: norm partials %lld B < %lld", what,
               (long long)(ws.gate - ws.norm), (long long)(w.nchunks * 8 * d.D));
    if (w.cpg > 1)
        EXPECT(ws.total - ws.gate >= w.nchunks * 4 * d.D, "%s: gate partials %lld B < %lld", what,
               (long long)(ws.total - ws.gate), (long long)(w.nchunks * 4 * d.D));
    EXPECT(!(empty && d.norm == LNMOD_RES_AFFINE), "%s: the ring takes an affine plan with an empty chunk", what);
}

int main()
{
    const lnmod_res_norm norms[2] = {LNMOD_RES_MODULATE, LNMOD_RES_AFFINE};
    int on_ring = 0, refused = 0;
    for (int a = 0; a < 2; a++) {
        const struct { int64_t S, B, L; lnmod_layout lay; } c[] = {
            {75600, 1, 1, LNMOD_PER_SAMPLE}, {32760, 1, 1, LNMOD_PER_SAMPLE}, {32760, 2, 1, LNMOD_PER_SAMPLE},
            {65601, 1, 1, LNMOD_PER_SAMPLE}, {80, 2, 32, LNMOD_PER_FRAME},     {780, 2, 312, LNMOD_PER_FRAME},
            {32760, 1, 1560, LNMOD_PER_FRAME}, {32765, 1, 1560, LNMOD_PER_FRAME}, {3, 1, 1, LNMOD_PER_SAMPLE},
            {160, 1, 1, LNMOD_PER_TOKEN}};
        for (const auto &k : c) {
            const lnmod_res_desc d = desc(264, k.S, k.B, k.L, k.lay, norms[a]);
            char what[96];
            std::snprintf(what, sizeof what, "%s S %lld x %lld L %lld layout %d", a ? "affine" : "modulate", (long long)k.S,
                          (long long)k.B, (long long)k.L, (int)k.lay);
            if (!res_bwd_bulk_shape(&d)) {
                refused++;
                EXPECT(a == 1 && (k.lay == LNMOD_PER_TOKEN || k.S == 32765), "%s: refused by the ring", what);
                continue;
            }
            on_ring++;
            check(d, what);
        }
    }
    EXPECT(on_ring == 18 && refused == 2, "%d plans on the ring, %d refused (want 18, 2)", on_ring, refused);
    if (fails) {
        std::printf("test_lnmod_res_walk: %d FAILED\n", fails);
        return 1;
    }
    std::printf("test_lnmod_res_walk: the walk, the finalize's reads and the workspace held (%d plans)\n", on_ring);
    return 0;
}
