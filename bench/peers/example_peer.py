"""example_peer.py -- an example for `--peer` (peer_user.py): LayerNorm-Modulate written as a
PyTorch user would, and a copy with a planted bug that the float64 check must catch.

  adaload bench --set wan --peer bench/peers/example_peer.py:lnmod_fp32
  python3 bench/peers/torch_peers.py --set quick --peer bench/peers/example_peer.py:lnmod_fp32 --out p.json
"""
import torch
import torch.nn.functional as F


def lnmod_fp32(x, scale, shift, eps):
    """Statistics and modulation in fp32, one rounding to x's dtype at the end."""
    y = F.layer_norm(x.float(), (x.shape[-1],), eps=eps) * (1 + scale.float()) + shift.float()
    return y.to(x.dtype)


def lnmod_no_shift(x, scale, shift, eps):
    """The planted bug: shift is left out (y is off by shift, and dshift is 0)."""
    y = F.layer_norm(x.float(), (x.shape[-1],), eps=eps) * (1 + scale.float()) + 0 * shift.float()
    return y.to(x.dtype)


lnmod_no_shift.adaload_name = "lnmod_no_shift"
