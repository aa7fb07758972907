"""model.py -- a DiT of Wan 2.1 blocks for the end-to-end experiment (needs PyTorch).

    m = WanDiT(width=1536, depth=4, heads=12, ffn=8960, text_len=512, modulate="torch")
    loss = m.loss(latents, t, context, target)      # latents [B, 16, F, H/8, W/8]

What it keeps of Wan 2.1 (the public wan/modules/model.py): patch embedding (Conv3d, patch
1x2x2), text embedding (4096 -> D -> D, GELU tanh) of a fixed-length context, sinusoidal
time embedding -> D -> D and the time projection to six modulation vectors per block; each
block: LayerNorm-Modulate -> self-attention (Q/K RMS-normed, SDPA) -> gated residual,
LayerNorm (affine) -> cross-attention to the text -> residual, LayerNorm-Modulate -> FFN
(GELU tanh) -> gated residual, the residual stream in fp32; the head (LayerNorm-Modulate ->
linear). What it leaves out: the 3-D rotary embedding (elementwise, a few % of a block) and
the unpatchify (the loss is taken in token space). Weights are random; nothing is loaded.

`modulate` picks the op before attention, FFN and head: "torch" is Wan's chain
(F.layer_norm in fp32, then * (1 + scale) + shift in fp32), "adaload" is
adaload.torch.lnmod (same inputs: the fp32 residual stream, fp32 scale/shift chunk views of
the [B, 6, D] modulation; fp32 output). Both see the same strided views.

`fused_residual=True` (adaload only; issue 22) replaces each residual add and the norm that
follows it by adaload.torch.lnmod_res, at all three sites of a block: x + y_sa * e[2] then
norm3 (gate, affine weight/bias), x + y_ca then norm2 * (1 + e[4]) + e[3] (no gate), and
x + y_ffn * e[5] then the NEXT block's norm1 * (1 + e'[1]) + e'[0] -- or, after the last
block, the head's modulate. Each block then takes and returns the residual x and the
normalized input of its first op (only the first block's norm1 is a plain lnmod). The
branch (bf16 under autocast) is the op's y, the residual fp32, the norm's output in y's
dtype (what the next Linear casts to anyway); the model's weights and numerics are the
unfused model's up to rounding.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

EPS = 1e-6


def modulate_torch(x, scale, shift):
    return F.layer_norm(x.float(), (x.shape[-1],), eps=EPS) * (1 + scale) + shift


def modulate_fn(kind):
    if kind == "torch":
        return modulate_torch
    if kind == "adaload":
        import adaload.torch as at

        def modulate_adaload(x, scale, shift):
            return at.lnmod(x.float(), scale, shift, eps=EPS, variant="dtile")
        return modulate_adaload
    raise ValueError("modulate %r: torch or adaload" % (kind,))


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).type_as(x) * self.weight


class Attention(nn.Module):
    """Self-attention (kv=None) or cross-attention to kv, through SDPA (under bf16 autocast
    SDPA takes Q, K, V in bf16: flash attention; without autocast everything stays fp32)."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.norm_q, self.norm_k = RMSNorm(d), RMSNorm(d)

    def forward(self, x, kv=None):
        kv = x if kv is None else kv
        B, S, D = x.shape
        h = self.h

        def heads(t, n):
            return t.view(B, n, h, D // h).transpose(1, 2)
        q = heads(self.norm_q(self.q(x)), S)
        k = heads(self.norm_k(self.k(kv)), kv.shape[1])
        v = heads(self.v(kv), kv.shape[1])
        o = F.scaled_dot_product_attention(q, k, v)
        return self.o(o.transpose(1, 2).reshape(B, S, D))


def lnmod_res_fn():
    import adaload.torch as at

    def lnmod_res(r, y, gate, scale, shift):
        return at.lnmod_res(r, y, gate, scale, shift, eps=EPS, variant="dtile")
    return lnmod_res


class Block(nn.Module):
    def __init__(self, d, heads, ffn, modulate):
        super().__init__()
        self.mod = modulate
        self.res = None  # lnmod_res_fn() when the model fuses the residual sites
        self.self_attn = Attention(d, heads)
        self.norm3 = nn.LayerNorm(d, eps=EPS, elementwise_affine=True)
        self.cross_attn = Attention(d, heads)
        self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.GELU(approximate="tanh"), nn.Linear(ffn, d))
        self.modulation = nn.Parameter(torch.randn(1, 6, d) / d ** 0.5)

    def forward(self, x, e, context):
        e = (self.modulation.float() + e).chunk(6, dim=1)  # [B, 1, D] views, batch stride 6*D
        y = self.self_attn(self.mod(x, e[1], e[0]))
        x = x + y.float() * e[2]
        x = x + self.cross_attn(self.norm3(x), context).float()
        y = self.ffn(self.mod(x, e[4], e[3]))
        return x + y.float() * e[5]

    def forward_fused(self, x, xn, e, context, next_scale, next_shift):
        """The block with its three residual sites fused (adaload.torch.lnmod_res): x the
        residual stream, xn this block's norm1 output (the previous site's out);
        next_scale/next_shift the modulation of the norm after the block (the next block's
        e'[1]/e'[0] or the head's). Returns (x, that norm's output)."""
        e = (self.modulation.float() + e).chunk(6, dim=1)
        y = self.self_attn(xn)
        x, n3 = self.res(x, y, e[2], self.norm3.weight, self.norm3.bias)
        x, n2 = self.res(x, self.cross_attn(n3, context), None, e[4], e[3])
        y = self.ffn(n2)
        return self.res(x, y, e[5], next_scale, next_shift)


def sinusoidal(dim, t):
    half = dim // 2
    f = torch.pow(10000, -torch.arange(half, device=t.device, dtype=torch.float64) / half)
    a = t.double()[:, None] * f[None]
    return torch.cat([torch.cos(a), torch.sin(a)], 1).float()


class WanDiT(nn.Module):
    def __init__(self, width=1536, depth=4, heads=12, ffn=8960, text_len=512, text_dim=4096,
                 freq_dim=256, in_ch=16, out_ch=16, modulate="torch", checkpoint_blocks=True,
                 fused_residual=False):
        super().__init__()
        if width % heads:
            raise ValueError("width %d is not a multiple of heads %d" % (width, heads))
        if fused_residual and modulate != "adaload":
            raise ValueError("fused_residual: adaload's fused op, with modulate=\"adaload\" only "
                             "(not %r)" % (modulate,))
        self.fused = bool(fused_residual)
        self.width, self.text_len, self.text_dim, self.freq_dim = width, text_len, text_dim, freq_dim
        self.ckpt = checkpoint_blocks
        self.mod = modulate_fn(modulate)
        self.patch = nn.Conv3d(in_ch, width, kernel_size=(1, 2, 2), stride=(1, 2, 2))
        self.text_embedding = nn.Sequential(nn.Linear(text_dim, width), nn.GELU(approximate="tanh"),
                                            nn.Linear(width, width))
        self.time_embedding = nn.Sequential(nn.Linear(freq_dim, width), nn.SiLU(),
                                            nn.Linear(width, width))
        self.time_projection = nn.Sequential(nn.SiLU(), nn.Linear(width, 6 * width))
        self.blocks = nn.ModuleList(Block(width, heads, ffn, self.mod)
                                    for _ in range(depth))
        self.head = nn.Linear(width, out_ch * 4)
        self.head_modulation = nn.Parameter(torch.randn(1, 2, width) / width ** 0.5)
        if self.fused:
            res = lnmod_res_fn()
            for b in self.blocks:
                b.res = res

    def calls_per_forward(self):
        """Calls of the LayerNorm-Modulate op per forward pass: two per block and the head
        (with fused_residual: the first block's norm1 only; the rest are lnmod_res calls,
        three per block)."""
        return 1 if self.fused else 2 * len(self.blocks) + 1

    def forward(self, latents, t, context):
        x = self.patch(latents).flatten(2).transpose(1, 2).float()  # [B, S, D], fp32 residual
        ctx = self.text_embedding(context)
        with torch.autocast("cuda", enabled=False):
            e = self.time_embedding(sinusoidal(self.freq_dim, t))
            e0 = self.time_projection(e).unflatten(1, (6, self.width))
        h = (self.head_modulation.float() + e[:, None]).chunk(2, dim=1)
        if self.fused:
            return self.head(self._fused_blocks(x, e0, ctx, h))
        for b in self.blocks:
            if self.ckpt and torch.is_grad_enabled():
                x = checkpoint(b, x, e0, ctx, use_reentrant=False)
            else:
                x = b(x, e0, ctx)
        return self.head(self.mod(x, h[1], h[0]))

    def _fused_blocks(self, x, e0, ctx, head_mod):
        """The blocks with the residual sites fused: the first norm1 is lnmod, each block
        ends with the next norm (the next block's norm1, after the last the head's); returns
        the head's normalized input. The next norm's modulation chunks are views of a [B, 6, D]
        (or the head's [B, 2, D]) made outside the checkpointed block, as the unfused model's."""
        mods = [(b.modulation.float() + e0).chunk(6, dim=1) for b in self.blocks]
        xn = self.mod(x, mods[0][1], mods[0][0])
        for i, b in enumerate(self.blocks):
            nxt = (mods[i + 1][1], mods[i + 1][0]) if i + 1 < len(self.blocks) else (head_mod[1], head_mod[0])
            if self.ckpt and torch.is_grad_enabled():
                x, xn = checkpoint(b.forward_fused, x, xn, e0, ctx, *nxt, use_reentrant=False)
            else:
                x, xn = b.forward_fused(x, xn, e0, ctx, *nxt)
        return xn

    def loss(self, latents, t, context, target):
        """Mean squared error in token space (a flow-matching-shaped objective)."""
        out = self.forward(latents, t, context)
        return F.mse_loss(out.float(), target.float(), reduction="mean")


def tokens_of(frames, height, width):
    """Wan 2.1 tokens of a snapped sample: (1 + (F-1)/4) * (H/16) * (W/16)."""
    return (1 + (frames - 1) // 4) * (height // 16) * (width // 16)


def latent_shape(batch, frames, height, width, channels=16):
    return (batch, channels, 1 + (frames - 1) // 4, height // 8, width // 8)


def count_params(m):
    return sum(p.numel() for p in m.parameters())

