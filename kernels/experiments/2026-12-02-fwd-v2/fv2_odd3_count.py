#!/usr/bin/env python3
"""fv2_odd3_count.py DISASM T K R D -- counts the SASS of one flat chunk kernel (round 5) per
element processed, before any GPU: which instructions a chunk issues, and on how many warps.

DISASM: `nvdisasm -gi` of the cubin holding the kernel (fv2_odd3_inst.cu's object; nvdisasm and
cuobjdump come with pip's nvidia-cuda-nvdisasm / nvidia-cuda-cuobjdump wheels); the function is
picked by its template arguments (<bf16, float, bf16, T, K, R>). Every instruction is given the
line of lnmod_fwd_v2_chunk.cuh it comes from: the kernel's own line, or the line of ck_store / ck_issue /
ck_mod::load it was inlined from (the small helpers -- ck_ld, ck_halve, ck_gather, dt<>, the PTX
wrappers -- count as their caller's line). Each line then gets a role from the source (anchors
below): every warp (A), warp 0 only (W0: thread 0's refill and bulk store, the mean/rstd
stores, the 16 edge elements), the warps with a column in the last step (L: ceil(lim / 32) of
them, lim = D - (K - 1) T), the others (NL), or none in a steady chunk (the rare second pass,
the modulation reload and its row loop; code outside the chunk loop and its pre-header). The count:
    warp instructions a chunk = sum over lines of (instructions) x (warps of its role)
    thread instructions an element = 32 x that / (R D)
Caveats: nvdisasm's line table is what ptxas kept (scheduling mixes neighbouring lines; an
instruction the compiler hoisted out of a branch counts in the branch's role); branches
count as straight code (each instruction once per chunk), which is what a steady chunk runs.
"""
import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "lnmod_fwd_v2_chunk.cuh")
STRUCTURAL = ("ck_store", "ck_issue", "load", "ck_second_pass")  # helpers whose own lines are kept


def source_roles(src):
    """line number -> role, from anchors in lnmod_fwd_v2_chunk.cuh."""
    lines = src.split("\n")
    role = {}

    def find(text, start=0):
        for i in range(start, len(lines)):
            if text in lines[i]:
                return i
        raise SystemExit("anchor not found: " + text)

    def block_end(i):  # the line closing the block that line i opens (brace counting)
        depth = 1
        for j in range(i + 1, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            if depth <= 0:
                return j
        return len(lines) - 1

    def mark(a, b, r):  # lines a..b (0-based, inclusive)
        for j in range(a, b + 1):
            role[j + 1] = r

    k0 = find("__global__ void __launch_bounds__(T")
    kend = block_end(find("{", k0))
    mark(k0, kend, "none")  # outside the chunk loop
    loop = find("for (int k = 0; k < n; k++) {", k0)
    mark(loop, block_end(loop), "A")
    r0 = find("if (t == 0 && k + c.NS - 2 < n) {", loop)
    mark(r0 + 1, block_end(r0) - 1, "W0")
    w1 = find("if (wlast) {", loop)
    e1 = find("} else {", w1)
    mark(w1 + 1, e1 - 1, "L")
    mark(e1 + 1, block_end(e1) - 1, "NL")
    m0 = find("if (warp == 0 && lane < g.nr) {", e1)
    mark(m0 + 1, block_end(m0) - 1, "W0")
    f0 = find("if (g.r0 + g.nr <= mod.end) {", m0)
    w3 = find("if (wlast) {", f0)
    mark(w3 + 1, block_end(w3) - 1, "L")
    s0 = find("} else { // a row leaves the run", f0)
    mark(s0, block_end(s0), "none")
    # ck_store and ck_issue: warp 0 (thread 0's bulk copies, lanes 16..31's edge elements)
    for name in ("__device__ __forceinline__ void ck_store(", "__device__ __forceinline__ void ck_issue("):
        f = find(name)
        mark(f, block_end(find("{", f)), "W0")
    ld = find("__device__ __forceinline__ void load(const lnmod_kparams &p")
    mark(ld, block_end(ld), "none")
    sp = find("__device__ __forceinline__ float ck_second_pass(")  # the rare second pass
    mark(sp, block_end(find("{", sp)), "none")
    return role, lines


def function_text(dis, T, K, R):
    want = "Li%dELi%dELi%dE" % (T, K, R)
    blocks = re.split(r"\n//-+ \.text\.", dis)
    for b in blocks:
        head = b.split("\n", 1)[0]
        if "chunk_kernel" in head and "13__nv_bfloat16fS" in head and want in head:
            return b
    raise SystemExit("no chunk_kernel<bf16, float, bf16, %d, %d, %d> in the disassembly" % (T, K, R))


def attribute(text, src_lines):
    """[(role line, kernel line, opcode, text)] for every instruction: the role line is the
    innermost line of the kernel or of a structural helper, the kernel line the kernel's own
    (where the helper was called: whether the instruction is in the chunk loop)."""
    ann = re.compile(r'//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
    ins = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)")
    lab = re.compile(r"^(\.L_x_\d+):")
    parent = {}
    cur = None
    out = []

    def in_chunk(f):
        return f.endswith("lnmod_fwd_v2_chunk.cuh")

    def helper_of(line):  # the function an lnmod_fwd_v2_chunk.cuh line belongs to (nearest definition above)
        for j in range(line - 1, -1, -1):
            if re.search(r"__(?:device|global)__", src_lines[j]):
                names = [n for n in re.findall(r"(\w+)\(", src_lines[j])
                         if n not in ("__launch_bounds__", "FV2_CHUNK_MINB", "sizeof")]
                return names[0] if names else ""
        return ""

    def resolve(f, l, kernel_only, depth=0):
        key = (f, l)
        if in_chunk(f):
            h = helper_of(l)
            if h == "chunk_kernel" or (not kernel_only and h in STRUCTURAL) or depth > 8:
                return l
        if key in parent and depth <= 8:
            return resolve(parent[key][0], parent[key][1], kernel_only, depth + 1)
        return None

    fresh = True  # the next annotation starts a group: its first line is the innermost
    labels = {}
    pending = []
    for raw in text.split("\n"):
        m = lab.match(raw.strip())
        if m:
            pending.append(m.group(1))
            continue
        m = ann.search(raw)
        if m:
            f, l = m.group(1), int(m.group(2))
            if m.group(3):
                parent[(f, l)] = (m.group(3), int(m.group(4)))
            if fresh:
                cur = (f, l)
                fresh = False
            continue
        m = ins.search(raw)
        if m and cur:
            addr = int(m.group(1), 16)
            for name in pending:
                labels[name] = addr
            pending = []
            t = re.search(r"BRA\s+`\((\.L_x_\d+)\)", raw)
            out.append((resolve(cur[0], cur[1], False), resolve(cur[0], cur[1], True), m.group(3), raw.strip(), addr,
                        t.group(1) if t else None))
            fresh = True
    return [x[:5] + (labels.get(x[5]) if x[5] else None,) for x in out]


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    dis = open(sys.argv[1]).read()
    T, K, R, D = (int(a) for a in sys.argv[2:])
    src = open(SRC).read()
    role, lines = source_roles(src)
    ins = attribute(function_text(dis, T, K, R), lines)
    # the cold code ptxas places after the body's last EXIT: the mbarrier's retry loop (a
    # stall, not work), 64-bit division and reciprocal subroutines (the modulation reload)
    last_exit = max(i for i, x in enumerate(ins) if x[2] == "EXIT")
    cold = len(ins) - 1 - last_exit
    ins = ins[:last_exit + 1]
    # the chunk loop: the backward branch of the largest span; a chunk runs [head, back edge]
    back = max((x for x in ins if x[5] is not None and x[5] < x[4]), key=lambda x: x[4] - x[5])
    head, tail = back[5], back[4]
    NW = T // 32
    lim = D - (K - 1) * T
    nl = (lim + 31) // 32
    warps = {"A": NW, "W0": 1, "L": nl, "NL": NW - nl, "none": 0}
    loop = [l for l in role if role[l] != "none" and "for (int k = 0; k < n; k++)" in lines[l - 1]][0]
    loop_end = max(l for l in role if l > loop and role[l] != "none" and l < loop + 200 and
                   "par ^= s == 0" in lines[l - 1]) + 1
    per_line = collections.Counter()
    ops = collections.Counter()
    unres = 0
    show = int(os.environ.get("FV2_COUNT_SHOW", "0"))
    for line, kline, op, raw, addr, _ in ins:
        if line is None or kline is None:
            unres += 1
            continue
        if not (loop <= kline <= loop_end and head <= addr <= tail):
            continue  # before or after the chunk loop (its pre-header included)
        if line == show:
            print("   ", raw)
        per_line[line] += 1
        r = role.get(line, "none")
        ops[(r, op.split(".")[0])] += warps[r]
    total = sum(per_line[l] * warps[role.get(l, "none")] for l in per_line)
    elems = R * D
    print("chunk_kernel<bf16, float, bf16, T %d, K %d, R %d> at D %d: %d SASS instructions up to the last EXIT (%d cold"
          " ones after it), %d without an lnmod_fwd_v2_chunk.cuh line" % (T, K, R, D, len(ins), cold, unres))
    print("warps a CTA %d; last step: lim %d columns -> %d warp(s) with a column; chunk loop 0x%x..0x%x"
          % (NW, lim, nl, head, tail))
    print("\n| line | role | SASS | warps | source |\n|---:|---|---:|---:|---|")
    for l in sorted(per_line):
        r = role.get(l, "none")
        if warps[r]:
            print("| %d | %s | %d | %d | `%s` |" % (l, r, per_line[l], warps[r], lines[l - 1].strip()[:70]))
    skipped = sum(per_line[l] for l in per_line if warps[role.get(l, "none")] == 0)
    print("\nin the chunk loop but not in a steady chunk (the modulation reload): %d instructions" % skipped)
    print("warp instructions a chunk: %d; elements a chunk: %d; thread instructions an element: %.2f"
          % (total, elems, 32.0 * total / elems))
    byop = collections.Counter()
    for (r, op), n in ops.items():
        byop[op] += n
    print("\nper element by opcode (thread instructions):")
    for op, n in byop.most_common():
        print("  %-10s %.2f" % (op, 32.0 * n / elems))


if __name__ == "__main__":
    main()
