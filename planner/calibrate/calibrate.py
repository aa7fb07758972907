#!/usr/bin/env python3
"""calibrate.py -- measures the planner's cost and memory model on a GPU (`adaload calibrate`).

Runs a stack of Wan-shaped transformer blocks (the width, FFN, heads and text length of a
model preset: 1.3B or 14B) with PyTorch SDPA attention and activation checkpointing per block,
one training step (forward, backward) of a micro-batch of B samples of S tokens at several
(B, S), and measures the step time (CUDA events, median of repetitions after warm-up) and the
peak memory above what the weights and their gradients hold. It runs stacks of 1 and 2 blocks,
so the bytes a block's checkpoint keeps (2 blocks minus 1) and the working set of the block
recomputed in backward (1 block minus one checkpoint) separate, and extrapolates to the
model's L layers:

  seconds(B, S)    = t1 + (L - 1) * (t2 - t1)          t_k: the step time with k blocks
  peak_bytes(B, S) = L * (m2 - m1) + (m1 - (m2 - m1))  m_k: peak above the weights

Writes the profile CSV the planner reads with --profile (header batch,tokens,seconds,
peak_bytes; planner/README.md), a JSON beside it (OUT.json: the machine, torch, the raw
measurements and this script's own least-squares fits of t0 + B (alpha S + beta S^2 + gamma)
and of bytes per token). Activation setups: fp32-residual (the official Wan code: fp32
residual stream, bf16 autocast matmuls) or bf16-residual (bf16 weights and residual; norms
and modulation in fp32 inside the block, as diffusers).

  python3 calibrate.py --model-file datasets/models/wan2.1-14b.json --out profile.csv
  python3 calibrate.py --model-file ... --act fp32-residual --points 1x1560,2x14040 --out p.csv

Exit: 0 ok, 2 bad arguments, 77 no PyTorch or no CUDA device (nothing written).
Needs only PyTorch with CUDA and the standard library.
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import sys

DEFAULT_POINTS = [(b, s) for b in (1, 2, 4) for s in (1560, 3600, 14040, 32760, 75600)]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model-file", required=True, help="a model preset JSON (datasets/models/)")
    p.add_argument("--act", default="bf16-residual", choices=["bf16-residual", "fp32-residual"])
    p.add_argument("--out", required=True, help="the profile CSV to write (and OUT.json)")
    p.add_argument("--points", default=None,
                   help="comma-separated BxS micro-batches (default: B 1,2,4 x S 1560..75600)")
    p.add_argument("--max-tokens", type=int, default=160000, help="skip points with B*S above this")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    a = p.parse_args()
    pts = DEFAULT_POINTS
    if a.points:
        try:
            pts = [tuple(int(x) for x in t.lower().split("x")) for t in a.points.split(",")]
        except ValueError:
            p.error("--points: BxS,BxS,... with whole numbers")
        if any(len(t) != 2 or t[0] < 1 or t[1] < 1 for t in pts):
            p.error("--points: BxS with B >= 1 and S >= 1")
    a.points = [t for t in pts if t[0] * t[1] <= a.max_tokens]
    if len({s for _, s in a.points}) < 3:
        p.error("need at least 3 distinct token counts within --max-tokens for the fit")
    if a.repetitions < 1 or a.warmup < 0:
        p.error("--repetitions >= 1, --warmup >= 0")
    with open(a.model_file) as f:
        a.model = json.load(f)
    return a


def build_stack(torch, cfg, nblocks, act):
    """nblocks Wan 2.1 attention blocks (wan/modules/model.py's WanAttentionBlock shape)."""
    nn, F = torch.nn, torch.nn.functional
    D, Fd, H, eps = cfg["hidden_size"], cfg["ffn_size"], cfg["heads"], 1e-6
    wdt = torch.bfloat16 if act == "bf16-residual" else torch.float32

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d, dtype=wdt))

        def forward(self, x):
            y = x.float()
            y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)
            return y.type_as(x) * self.weight

    def rope(x, cos, sin):  # x [B, S, H, d]; rotate pairs in fp32, as the official code (in fp64)
        xf = x.float().unflatten(-1, (-1, 2))
        a, b = xf[..., 0], xf[..., 1]
        return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2).type_as(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            lin = lambda i, o: nn.Linear(i, o, dtype=wdt)
            self.q, self.k, self.v, self.o = lin(D, D), lin(D, D), lin(D, D), lin(D, D)
            self.cq, self.ck, self.cv, self.co = lin(D, D), lin(D, D), lin(D, D), lin(D, D)
            self.nq, self.nk, self.ncq, self.nck = RMSNorm(D), RMSNorm(D), RMSNorm(D), RMSNorm(D)
            self.norm3 = nn.LayerNorm(D, eps=eps, elementwise_affine=True, dtype=torch.float32)
            self.ffn1, self.ffn2 = lin(D, Fd), lin(Fd, D)
            self.modulation = nn.Parameter(torch.randn(1, 6, D, dtype=torch.float32) / D ** 0.5)

        def attn(self, q, k, v):
            B, S = q.shape[0], q.shape[1]
            q, k, v = (t.unflatten(-1, (H, -1)).transpose(1, 2) for t in (q, k, v))
            o = F.scaled_dot_product_attention(q.to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16))
            return o.transpose(1, 2).flatten(2)

        def forward(self, x, e, ctx, cos, sin):
            e = (self.modulation + e).chunk(6, dim=1)
            h = F.layer_norm(x.float(), (D,), eps=eps) * (1 + e[1]) + e[0]
            h = h.to(wdt) if wdt == torch.bfloat16 else h
            q = rope(self.nq(self.q(h)).unflatten(-1, (H, -1)), cos, sin).flatten(2)
            k = rope(self.nk(self.k(h)).unflatten(-1, (H, -1)), cos, sin).flatten(2)
            y = self.o(self.attn(q, k, self.v(h)))
            x = (x.float() + y.float() * e[2]).type_as(x)
            hc = self.norm3(x.float()).type_as(x)
            y = self.co(self.attn(self.ncq(self.cq(hc)), self.nck(self.ck(ctx)), self.cv(ctx)))
            x = x + y.type_as(x)
            h = F.layer_norm(x.float(), (D,), eps=eps) * (1 + e[4]) + e[3]
            h = h.to(wdt) if wdt == torch.bfloat16 else h
            y = self.ffn2(F.gelu(self.ffn1(h), approximate="tanh"))
            return (x.float() + y.float() * e[5]).type_as(x)

    return nn.ModuleList([Block() for _ in range(nblocks)]).cuda()


def measure(torch, cfg, stack, act, B, S, reps, warmup):
    """Median step time (s) and peak bytes above the weights of one fwd+bwd at (B, S)."""
    from torch.utils.checkpoint import checkpoint
    D, T, H = cfg["hidden_size"], cfg["text_len"], cfg["heads"]
    rdt = torch.bfloat16 if act == "bf16-residual" else torch.float32
    dev = "cuda"
    x = torch.randn(B, S, D, device=dev, dtype=rdt, requires_grad=True)
    ctx = torch.randn(B, T, D, device=dev, dtype=torch.bfloat16)
    e = torch.randn(B, 6, D, device=dev, dtype=torch.float32, requires_grad=True)
    half = D // H // 2
    ang = torch.arange(S, device=dev, dtype=torch.float32)[:, None] * torch.rand(half, device=dev)[None, :]
    cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(act == "fp32-residual")):
            h = x
            for blk in stack:
                h = checkpoint(blk, h, e, ctx, cos, sin, use_reentrant=False)
            loss = h.float().square().mean()
        loss.backward()
        for p in stack.parameters():
            p.grad = None
        x.grad = None
        e.grad = None

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    peak = torch.cuda.max_memory_allocated() - base
    del x, ctx, e
    torch.cuda.empty_cache()
    return statistics.median(times), peak


def lstsq(rows, ys):
    """Ordinary least squares by the normal equations (small systems, double precision), with
    each column scaled to a largest magnitude of 1 so the system stays well conditioned."""
    n = len(rows[0])
    sc = [max(abs(r[i]) for r in rows) or 1.0 for i in range(n)]
    rows = [[r[i] / sc[i] for i in range(n)] for r in rows]
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[piv], b[c], b[piv] = a[piv], a[c], b[piv], b[c]
        for r in range(c + 1, n):
            f = a[r][c] / a[c][c]
            a[r] = [x - f * y for x, y in zip(a[r], a[c])]
            b[r] -= f * b[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (b[r] - sum(a[r][k] * x[k] for k in range(r + 1, n))) / a[r][r]
    return [x[i] / sc[i] for i in range(n)]


def extrapolate(rows, points, L):
    """(B, S, seconds, peak_bytes) of the L-layer model from the 1- and 2-block rows."""
    by = {(r["blocks"], r["batch"], r["tokens"]): r for r in rows}
    prof = []
    for B, S in points:
        r1, r2 = by[(1, B, S)], by[(2, B, S)]
        dt, dm = r2["seconds"] - r1["seconds"], r2["peak_bytes"] - r1["peak_bytes"]
        prof.append((B, S, r1["seconds"] + (L - 1) * dt, L * dm + (r1["peak_bytes"] - dm)))
    return prof


def write_profile(out, prof, meta):
    """The profile CSV (what plan_profile.c reads) and OUT.json, each through a temporary and
    a rename; returns this script's fits (seconds, peak)."""
    tfit = lstsq([[B * S, B * S * S, B, 1.0] for B, S, _, _ in prof], [t for _, _, t, _ in prof])
    mfit = lstsq([[B * S, 1.0] for B, S, _, _ in prof], [m for _, _, _, m in prof])
    meta = dict(meta)
    meta["extrapolation"] = "seconds = t1 + (L-1)(t2 - t1); peak = L (m2 - m1) + (m1 - (m2 - m1))"
    meta["fit_seconds"] = {"alpha": tfit[0], "beta": tfit[1], "gamma": tfit[2], "overhead": tfit[3]}
    meta["fit_peak"] = {"bytes_per_token": mfit[0], "intercept": mfit[1]}
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("batch,tokens,seconds,peak_bytes\n")
        for B, S, t, m in prof:
            f.write(f"{B},{S},{t:.9g},{max(1, int(m))}\n")
    with open(tmp + ".json", "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    os.replace(tmp, out)
    os.replace(tmp + ".json", out + ".json")
    return tfit, mfit


def main():
    a = parse_args()
    try:
        import torch
    except ImportError:
        print("calibrate.py: needs PyTorch (python3 -c 'import torch' failed)", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("calibrate.py: PyTorch sees no CUDA device", file=sys.stderr)
        return 77
    cfg, L = a.model, a.model["layers"]
    torch.manual_seed(0)
    rows = []
    for nb in (1, 2):
        stack = build_stack(torch, cfg, nb, a.act)
        for B, S in a.points:
            t, m = measure(torch, cfg, stack, a.act, B, S, a.repetitions, a.warmup)
            rows.append({"blocks": nb, "batch": B, "tokens": S, "seconds": t, "peak_bytes": m})
            print(f"calibrate: {nb} block(s) B={B} S={S}: {t * 1e3:.2f} ms, {m / 2**30:.2f} GiB", flush=True)
        del stack
        torch.cuda.empty_cache()
    prof = extrapolate(rows, a.points, L)
    meta = {
        "schema": "adaload.calibrate/1",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(),
        "gpu": torch.cuda.get_device_name(0),
        "gpu_memory_bytes": torch.cuda.get_device_properties(0).total_memory,
        "torch": torch.__version__,
        "model": cfg.get("name"),
        "activation_setup": a.act,
        "layers": L,
        "measurements": rows,
    }
    tfit, mfit = write_profile(a.out, prof, meta)
    print(f"calibrate: wrote {a.out} ({len(prof)} points) and {a.out}.json; "
          f"bytes/token {mfit[0]:.0f}, t0 {tfit[3]:.4g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
