#!/usr/bin/env python3
"""calibrate.py -- measures the planner's cost and memory model on a GPU (`adaload calibrate`).

Runs a stack of Wan-shaped transformer blocks (the width, FFN, heads and text length of a
model preset: 1.3B or 14B) with PyTorch SDPA attention and activation checkpointing per block,
one training step (forward, backward) of a micro-batch of B samples of S tokens at several
(B, S) -- batch sizes 1..8 and token counts 1,560..75,600 by default, or (--span SUMMARY)
the token counts and batch sizes a plan will use -- and measures the step time (CUDA events,
every repetition after warm-up kept) and the peak memory above what the weights and their
gradients hold. It runs stacks of several depths (--depths, default 1, 2, 4, 8; a depth that
runs out of memory is skipped) and fits, per (B, S), a line over every (depth, repetition):

  seconds(k) = a + b k   ->  seconds(L) = a + b L,  with its standard error
  peak(k)    = m0 + c k  ->  peak(L)    = m0 + c L

The earlier form, t1 + (L - 1)(t2 - t1) from one 1- and one 2-block median, multiplies the
noise of a measurement by about sqrt((L-1)^2 + L^2) (~55 for L = 40; a B = 2 point measured
slower than B = 4 on the H200): the fit over depths up to 8 and every repetition cuts that
by the depth lever and sqrt(repetitions), and reports what is left (se_seconds and the
noise factor se / stddev of one repetition, per point, in OUT.json).

Writes the profile CSV the planner reads with --profile (header batch,tokens,seconds,
peak_bytes,seconds_cv; planner/README.md; seconds_cv is the spread of the deepest stack's
repetitions, stddev / median, the planner's jitter), a JSON beside it (OUT.json: the machine,
torch, the raw measurements, the extrapolation's spread, this script's own fits of
t0 + B (alpha S + beta S^2 + gamma) and of the memory model c0 + B (bytes_per_token S +
bytes_per_sample), with their residuals). Activation setups: fp32-residual (the official Wan code: fp32
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

# The least-squares solver of the adaload package (python/adaload/fit.py) of this source tree.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from adaload.fit import lstsq  # noqa: E402

DEFAULT_POINTS = [(b, s) for b in (1, 2, 4, 8) for s in (1560, 3600, 14040, 32760, 75600)]
DEFAULT_DEPTHS = (1, 2, 4, 8)


def span_points(summary, points=5, max_tokens=160000):
    """(B, S) spanning a plan summary's buckets: `points` token counts spread over the planned
    buckets, each at batch 1, 2, 4, ... up to its planned batch size (within max_tokens)."""
    bs = sorted((b for b in summary["buckets"] if not b.get("dropped")), key=lambda b: b["tokens"])
    n = min(points, len(bs))
    out = []
    for i in range(n):
        b = bs[round(i * (len(bs) - 1) / max(1, n - 1))]
        S = b["tokens"]
        top = max(1, min(int(b.get("batch_size") or 1), max_tokens // S))
        B = 1
        while B < top:
            out.append((B, S))
            B *= 2
        out.append((top, S))
    return sorted(set(out), key=lambda t: (t[1], t[0]))


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
    p.add_argument("--depths", default=",".join(map(str, DEFAULT_DEPTHS)),
                   help="stack depths fitted (at least 2 distinct; default 1,2,4,8)")
    p.add_argument("--span", default=None,
                   help="a plan's summary JSON: measure the token counts and batch sizes it uses")
    a = p.parse_args()
    try:
        a.depths = sorted({int(x) for x in a.depths.split(",")})
    except ValueError:
        p.error("--depths: whole numbers, comma-separated")
    if len(a.depths) < 2 or a.depths[0] < 1:
        p.error("--depths: at least 2 distinct depths >= 1")
    pts = DEFAULT_POINTS
    if a.span:
        with open(a.span) as f:
            pts = span_points(json.load(f), max_tokens=a.max_tokens)
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
        x.grad = None
        e.grad = None

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    # gradients of the parameters stay allocated between steps in training: keep them
    for p in stack.parameters():
        p.grad = torch.zeros_like(p)
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
    for p in stack.parameters():
        p.grad = None
    del x, ctx, e
    torch.cuda.empty_cache()
    return times, peak


def depth_fit(ks, ys, L):
    """Line y = a + b k over (k, y); returns (y at L, its standard error, the stddev of one
    y about the line). The error is 0 when the points lie on the line (or are too few)."""
    n = len(ks)
    mk, my = sum(ks) / n, sum(ys) / n
    sxx = sum((k - mk) ** 2 for k in ks)
    if sxx == 0:
        raise ValueError("the depth fit needs at least 2 different depths")
    b = sum((k - mk) * (y - my) for k, y in zip(ks, ys)) / sxx
    a = my - b * mk
    res = sum((y - a - b * k) ** 2 for k, y in zip(ks, ys))
    s = (res / (n - 2)) ** 0.5 if n > 2 else 0.0
    return a + b * L, s * (1.0 / n + (L - mk) ** 2 / sxx) ** 0.5, s


def extrapolate(rows, points, L):
    """(B, S, seconds, peak_bytes, info) of the L-layer model from the rows of every depth:
    a line over (depth, repetition) per point (depth_fit). A row holds blocks, batch, tokens,
    seconds (the median) and, when measured here, times (every repetition). info: the
    standard error of the extrapolated seconds, the noise factor (se over the stddev of one
    repetition), the depths used and the jitter of the deepest stack (seconds_cv)."""
    prof = []
    for B, S in points:
        mine = sorted((r for r in rows if r["batch"] == B and r["tokens"] == S), key=lambda r: r["blocks"])
        ks = [r["blocks"] for r in mine for _ in r.get("times", [r["seconds"]])]
        ts = [t for r in mine for t in r.get("times", [r["seconds"]])]
        t, se, s1 = depth_fit(ks, ts, L)
        m, _, _ = depth_fit([r["blocks"] for r in mine], [r["peak_bytes"] for r in mine], L)
        deep = mine[-1].get("times", [mine[-1]["seconds"]])
        med = statistics.median(deep)
        cv = statistics.pstdev(deep) / med if len(deep) > 1 and med > 0 else 0.0
        prof.append((B, S, t, m, {"se_seconds": se, "noise_factor": se / s1 if s1 > 0 else 0.0,
                                  "depths": sorted({r["blocks"] for r in mine}), "seconds_cv": cv}))
    return prof


def fit_memory(prof):
    """c0 + B (bytes_per_token S + bytes_per_sample) (the per-sample term with >= 2 batch
    sizes, dropped when negative) and the relative residuals, as the planner fits it."""
    ys = [p[3] for p in prof]
    x = None
    if len({p[0] for p in prof}) >= 2:
        x = lstsq([[B * S, 1.0, B] for B, S, *_ in prof], ys)
        if x is not None and x[2] < 0:
            x = None
    if x is None:
        x = lstsq([[B * S, 1.0] for B, S, *_ in prof], ys)
        if x is None:
            raise ValueError("the memory fit needs points with at least 2 different batch x tokens")
        x += [0.0]
    rel = [abs(x[1] + B * (x[0] * S + x[2]) - y) / y for (B, S, *_), y in zip(prof, ys)]
    return {"bytes_per_token": x[0], "intercept": x[1], "bytes_per_sample": x[2],
            "rms_rel": (sum(e * e for e in rel) / len(rel)) ** 0.5, "max_rel": max(rel)}


def write_profile(out, prof, meta):
    """The profile CSV (what plan_profile.c reads) and OUT.json, each through a temporary and
    a rename; returns this script's fits (seconds, or None when the points cannot determine
    it; peak)."""
    tfit = lstsq([[B * S, B * S * S, B, 1.0] for B, S, *_ in prof], [p[2] for p in prof])
    mfit = fit_memory(prof)
    meta = dict(meta)
    meta["extrapolation"] = ("per (B, S) a line over every (depth, repetition): seconds(L) = a + b L, "
                             "peak(L) = m0 + c L")
    meta["spread"] = [dict({"batch": p[0], "tokens": p[1]}, **(p[4] if len(p) > 4 else {})) for p in prof]
    # None (null): the points cannot tell the terms apart (e.g. one batch size)
    meta["fit_seconds"] = tfit and {"alpha": tfit[0], "beta": tfit[1], "gamma": tfit[2], "overhead": tfit[3]}
    meta["fit_peak"] = mfit
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("batch,tokens,seconds,peak_bytes,seconds_cv\n")
        for p in prof:
            B, S, t, m = p[:4]
            cv = p[4]["seconds_cv"] if len(p) > 4 else 0.0
            f.write(f"{B},{S},{t:.9g},{max(1, int(m))},{max(cv, 1e-6):.6g}\n")
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
    rows, skipped = [], []
    for nb in a.depths:
        stack = build_stack(torch, cfg, nb, a.act)
        for B, S in a.points:
            try:
                ts, m = measure(torch, cfg, stack, a.act, B, S, a.repetitions, a.warmup)
            except torch.cuda.OutOfMemoryError:
                skipped.append({"blocks": nb, "batch": B, "tokens": S})
                torch.cuda.empty_cache()
                print(f"calibrate: {nb} block(s) B={B} S={S}: out of memory, skipped", flush=True)
                continue
            t = statistics.median(ts)
            rows.append({"blocks": nb, "batch": B, "tokens": S, "seconds": t, "times": ts, "peak_bytes": m})
            print(f"calibrate: {nb} block(s) B={B} S={S}: {t * 1e3:.2f} ms, {m / 2**30:.2f} GiB", flush=True)
        del stack
        torch.cuda.empty_cache()
    # a point keeps the depths it was measured at; one measured at fewer than 2 is dropped
    a.points = [(B, S) for B, S in a.points
                if len({r["blocks"] for r in rows if (r["batch"], r["tokens"]) == (B, S)}) >= 2]
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
        "out_of_memory": skipped,
    }
    tfit, mfit = write_profile(a.out, prof, meta)
    print(f"calibrate: wrote {a.out} ({len(prof)} points) and {a.out}.json; "
          f"bytes/token {mfit['bytes_per_token']:.0f}, bytes/sample {mfit['bytes_per_sample']:.4g}, "
          f"t0 {tfit[3] if tfit else float('nan'):.4g} s; worst noise factor {max(p[4]['noise_factor'] for p in prof):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
