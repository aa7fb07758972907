// bv3_tables.h -- the harness's shapes and kernels (bv3_main.cu only): which shapes round 3
// times or checks and with which kernels.
#ifndef ADALOAD_BV3_TABLES_H
#define ADALOAD_BV3_TABLES_H

#include <cstring>
#include <string>
#include <vector>

#include "bv3.h"

namespace {

struct shape {
    const char *name;
    lnmod_dtype xt, mt, yt;
    lnmod_layout lay;
    int64_t D, rows, S, L;
    int misalign; // 1: every pointer 4 bytes off 16-byte alignment, strides 6*D + 1
    bool timed;
    const char *r3; // round 3's kernels ("all": every one)
};

const lnmod_dtype BF = LNMOD_BF16, F32 = LNMOD_F32, H = LNMOD_F16;
const lnmod_layout SAM = LNMOD_PER_SAMPLE, TOK = LNMOD_PER_TOKEN, FRM = LNMOD_PER_FRAME;

// The bar's shapes (timed) first, in the order the budget should keep them, then odd ones
// for the checks only (every kernel; those a kernel does not take run the built dtile).
const char *const BULK = "dtile,half,k2,k2half";
const shape SHAPES[] = {
    {"bf16 sample D1536", BF, F32, BF, SAM, 1536, 32760, 32760, 1, 0, true, BULK},
    {"bf16 sample D3072", BF, F32, BF, SAM, 3072, 32760, 32760, 1, 0, true, BULK},
    {"bf16 token D1536", BF, F32, BF, TOK, 1536, 32760, 32760, 1, 0, true, "dtile,tok"},
    {"bf16 token D3072", BF, F32, BF, TOK, 3072, 32760, 32760, 1, 0, true, "dtile,tok"},
    {"bf16 token D5120", BF, F32, BF, TOK, 5120, 32760, 32760, 1, 0, true, "dtile,tok"},
    {"bf16 sample D5120", BF, F32, BF, SAM, 5120, 32760, 32760, 1, 0, true, BULK},
    {"bf16 sample D1536 r75600", BF, F32, BF, SAM, 1536, 75600, 75600, 1, 0, true, BULK},
    {"bf16 sample D3072 r75600", BF, F32, BF, SAM, 3072, 75600, 75600, 1, 0, true, BULK},
    {"bf16 frame D1536", BF, F32, BF, FRM, 1536, 32760, 32760, 1560, 0, true, BULK},
    {"bf16-bf16-f32 sample D3072", BF, BF, F32, SAM, 3072, 8192, 4096, 1, 0, false, "all"},
    {"f16 frame D2048 L300", H, H, H, FRM, 2048, 3000, 1000, 300, 0, false, "all"},
    {"bf16 frame D1536 short last frame", BF, F32, BF, FRM, 1536, 3021, 1007, 500, 0, false, "all"},
    {"bf16 sample D1536 S3 (rows < G)", BF, F32, BF, SAM, 1536, 6, 3, 1, 0, false, "all"},
    {"bf16 sample D1000 (odd D)", BF, F32, BF, SAM, 1000, 4000, 2000, 1, 0, false, "all"},
    {"bf16 sample D1536 misaligned", BF, F32, BF, SAM, 1536, 2000, 1000, 1, 1, false, "all"},
    {"f32 sample D3072 (fp32 x)", F32, F32, F32, SAM, 3072, 4000, 2000, 1, 0, false, "all"},
    {"bf16 sample D5120 S700 (G2, odd shares)", BF, F32, BF, SAM, 5120, 2100, 700, 1, 0, false, "all"},
    {"bf16-bf16-f32 frame D1536 L97", BF, BF, F32, FRM, 1536, 1940, 970, 97, 0, false, "all"},
    {"bf16 sample D8192 (past the row shape)", BF, F32, BF, SAM, 8192, 600, 300, 1, 0, false, "all"},
    {"f32 sample D4 S5", F32, F32, F32, SAM, 4, 10, 5, 1, 0, false, "all"},
    {"f32 token D8", F32, F32, F32, TOK, 8, 37, 37, 1, 0, false, "all"},
    {"bf16 token D1536 r37", BF, F32, BF, TOK, 1536, 37, 37, 1, 0, false, "all"},
    {"bf16 token D1000 r300 (odd D)", BF, F32, BF, TOK, 1000, 300, 300, 1, 0, false, "all"},
    {"bf16-bf16-f32 token D3072 r500", BF, BF, F32, TOK, 3072, 500, 500, 1, 0, false, "all"},
    {"f16 token D2048 r300", H, H, H, TOK, 2048, 300, 300, 1, 0, false, "all"},
    {"bf16 token D1536 misaligned", BF, F32, BF, TOK, 1536, 300, 300, 1, 1, false, "all"},
};

// The kernels: the built dtile (lnmod_backward, the baseline) and round 3's candidates
// (bv3.h). must_match: bits equal to the built dtile's wherever the candidate's own kernel
// ran (same plan, G and T, same addition order).
struct kern {
    const char *name;
    int id;
    bool must_match;
};
const kern KERNELS[] = {
    {"dtile", BV3_DTILE, false}, {"half", BV3_HALF, true}, {"k2", BV3_K2, true},
    {"k2half", BV3_K2HALF, true}, {"tok", BV3_TOK, false},
};
const int NK = (int)(sizeof KERNELS / sizeof KERNELS[0]);

// The kernel indices of a comma-separated list ("all": every kernel, dtile first); false
// when a name is unknown.
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
