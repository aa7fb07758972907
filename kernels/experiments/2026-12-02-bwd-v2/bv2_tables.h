// bv2_tables.h -- the harness's shapes and kernels (bv2_main.cu only): which shapes round 2
// times or checks and with which kernels, and every kernel's v2 configuration (bv2.h).
#ifndef ADALOAD_BV2_TABLES_H
#define ADALOAD_BV2_TABLES_H

#include <cstring>
#include <string>
#include <vector>

#include "bv2.h"

namespace {

struct shape {
    const char *name;
    lnmod_dtype xt, mt, yt;
    lnmod_layout lay;
    int64_t D, rows, S, L;
    int misalign; // 1: every pointer 4 bytes off 16-byte alignment, strides 6*D + 1
    bool timed;
    const char *r2; // round 2's kernels ("all": every one); nullptr: settled, not in round 2
};

const lnmod_dtype BF = LNMOD_BF16, F32 = LNMOD_F32, H = LNMOD_F16;
const lnmod_layout SAM = LNMOD_PER_SAMPLE, TOK = LNMOD_PER_TOKEN, FRM = LNMOD_PER_FRAME;

// The bar's shapes (timed) first, then odd ones for the checks only. Settled by round 1
// (r2 nullptr; README "Round 1: outcome"): per token (every v2 falls back to v1), fp32 x
// (88.6% / 92.5%), four samples at D1536 (as one). --shape NAME still runs them.
const char *const R1_ALL = "v1,g1,g2,g3,g4,g2h,g2c512,g4c512";
const shape SHAPES[] = {
    {"bf16 sample D1536", BF, F32, BF, SAM, 1536, 32760, 32760, 1, 0, true,
     "v1,g2,g4e16,g4e16t,g6e16,g8e16,b2,b4e16,b4e16nf,b4e16t,b6e16,b8e16"},
    {"bf16 sample D3072", BF, F32, BF, SAM, 3072, 32760, 32760, 1, 0, true, "v1,g4,g4e16t,b2,b4e16,b4e16t"},
    {"bf16 sample D5120", BF, F32, BF, SAM, 5120, 32760, 32760, 1, 0, true, "v1,g2,g2t,g3w,b2,b2t,b3w"},
    {"bf16 sample D5120 r75600", BF, F32, BF, SAM, 5120, 75600, 75600, 1, 0, true,
     "v1,g2c512,g3wc512,b2c512,b2tc512,b3wc512"},
    {"bf16 sample D3072 r75600", BF, F32, BF, SAM, 3072, 75600, 75600, 1, 0, true, "v1,g4,g4c512,b4e16,b4e16c512,b4e16tc512"},
    {"bf16 frame D1536", BF, F32, BF, FRM, 1536, 32760, 32760, 1560, 0, true, "v1,g2,g4e16,g8e16,b4e16,b4e16t,b8e16"},
    {"bf16 frame D5120", BF, F32, BF, FRM, 5120, 32760, 32760, 1560, 0, true, "v1,g2,g3w,b2,b2t,b3w"},
    {"bf16 sample D1536 r75600", BF, F32, BF, SAM, 1536, 75600, 75600, 1, 0, true,
     "v1,g4e16,g4e16c512,b4e16c512,b4e16tc512"},
    {"bf16 sample D1536 B4", BF, F32, BF, SAM, 1536, 4 * 8190, 8190, 1, 0, true, nullptr},
    {"bf16 token D1536", BF, F32, BF, TOK, 1536, 32760, 32760, 1, 0, true, nullptr},
    {"bf16 token D5120", BF, F32, BF, TOK, 5120, 32760, 32760, 1, 0, true, nullptr},
    {"f32 sample D1536", F32, F32, F32, SAM, 1536, 32760, 32760, 1, 0, true, nullptr},
    {"f32 sample D5120", F32, F32, F32, SAM, 5120, 32760, 32760, 1, 0, true, nullptr},
    {"bf16-bf16-f32 sample D3072", BF, BF, F32, SAM, 3072, 8192, 4096, 1, 0, false, "all"},
    {"f16 frame D2048 L300", H, H, H, FRM, 2048, 3000, 1000, 300, 0, false, "all"},
    {"bf16 frame D1536 short last frame", BF, F32, BF, FRM, 1536, 3021, 1007, 500, 0, false, "all"},
    {"bf16 sample D1536 S3 (rows < G)", BF, F32, BF, SAM, 1536, 6, 3, 1, 0, false, "all"},
    {"bf16 sample D1000 (odd D)", BF, F32, BF, SAM, 1000, 4000, 2000, 1, 0, false, "all"},
    {"bf16 sample D1536 misaligned", BF, F32, BF, SAM, 1536, 2000, 1000, 1, 1, false, "v1,g1,g2,g4e16,b2,b4e16"},
    {"f32 token D8", F32, F32, F32, TOK, 8, 37, 37, 1, 0, false, "all"},
    {"bf16 sample D8192", BF, F32, BF, SAM, 8192, 16384, 16384, 1, 0, false, "v1,g1,g2,g4e16,b2,b4e16"},
    {"f32 sample D4 S5", F32, F32, F32, SAM, 4, 10, 5, 1, 0, false, "all"},
    {"bf16 sample D5120 S700 (G3 tail)", BF, F32, BF, SAM, 5120, 2100, 700, 1, 0, false, "all"},
    {"bf16-bf16-f32 frame D1536 L97", BF, BF, F32, FRM, 1536, 1940, 970, 97, 0, false, "all"},
};

// The kernels: v1; round 1's v2 configurations (G groups, about 256 or 512 chunks; g2h:
// two groups keeping the row in registers between its two passes); round 2's: eN = at
// least two vectors a thread (16 bf16 elements), w = CTAs of up to 960 threads (64
// registers), b = the ring filled by the bulk copy engine, nf = without the proxy fence,
// t = the group's thread count compiled in (bf16 D1536 / D3072 / D5120 only).
struct kern {
    const char *name;
    bv2_config c; // c.G == 0: v1 (lnmod_backward "dtile")
};
const int V1T = BV2_TARGET_V1, FT = BV2_TARGET_FINE;
const kern KERNELS[] = {
    {"v1", {0, 0, 0, 0, 0, 0, 0, 0}},
    {"g1", {1, V1T, 0, 0, 1, 768, 0, 0}},
    {"g2", {2, V1T, 0, 0, 1, 768, 0, 0}},
    {"g3", {3, V1T, 0, 0, 1, 768, 0, 0}},
    {"g4", {4, V1T, 0, 0, 1, 768, 0, 0}},
    {"g2h", {2, V1T, 1, 0, 1, 768, 0, 0}},
    {"g2c512", {2, FT, 0, 0, 1, 768, 0, 0}},
    {"g4c512", {4, FT, 0, 0, 1, 768, 0, 0}},
    {"g4e16", {4, V1T, 0, 0, 2, 768, 0, 0}},
    {"g4e16c512", {4, FT, 0, 0, 2, 768, 0, 0}},
    {"g6e16", {6, V1T, 0, 0, 2, 768, 0, 0}},
    {"g8e16", {8, V1T, 0, 0, 2, 768, 0, 0}},
    {"g3w", {3, V1T, 0, 0, 2, 960, 0, 0}},
    {"g3wc512", {3, FT, 0, 0, 2, 960, 0, 0}},
    {"b2", {2, V1T, 0, 1, 1, 768, 0, 0}},
    {"b2c512", {2, FT, 0, 1, 1, 768, 0, 0}},
    {"b4e16", {4, V1T, 0, 1, 2, 768, 0, 0}},
    {"b4e16nf", {4, V1T, 0, 1, 2, 768, 1, 0}},
    {"b4e16c512", {4, FT, 0, 1, 2, 768, 0, 0}},
    {"b6e16", {6, V1T, 0, 1, 2, 768, 0, 0}},
    {"b8e16", {8, V1T, 0, 1, 2, 768, 0, 0}},
    {"g4e16t", {4, V1T, 0, 0, 2, 768, 0, 1}},
    {"g2t", {2, V1T, 0, 0, 2, 768, 0, 1}},
    {"b4e16t", {4, V1T, 0, 1, 2, 768, 0, 1}},
    {"b4e16tc512", {4, FT, 0, 1, 2, 768, 0, 1}},
    {"b2t", {2, V1T, 0, 1, 2, 768, 0, 1}},
    {"b2tc512", {2, FT, 0, 1, 2, 768, 0, 1}},
    {"b3w", {3, V1T, 0, 1, 2, 960, 0, 0}},
    {"b3wc512", {3, FT, 0, 1, 2, 960, 0, 0}},
};
const int NK = (int)(sizeof KERNELS / sizeof KERNELS[0]);

// The kernel indices of a comma-separated list ("all": every kernel, v1 first); false when a
// name is unknown.
bool kernel_list(const char *list, std::vector<int> &out)
{
    out.clear();
    if (!std::strcmp(list, "all")) {
        for (int k = 0; k < NK; k++) out.push_back(k);
        return true;
    }
    std::string s(list);
    for (size_t at = 0; at <= s.size();) {
        size_t e = s.find(',', at);
        if (e == std::string::npos) e = s.size();
        const std::string n = s.substr(at, e - at);
        int found = -1;
        for (int k = 0; k < NK; k++)
            if (n == KERNELS[k].name) found = k;
        if (found < 0) return false;
        out.push_back(found);
        at = e + 1;
    }
    return !out.empty();
}

} // namespace

#endif
