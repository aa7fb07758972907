"""peer_user.py -- `--peer MODULE:FUNCTION`: your own PyTorch (or Triton) callable as a peer.

torch_peers.py (and `adaload bench --peer SPEC`, which passes it on) loads each spec here and
runs the function through exactly the flow of the built-in peers: at every shape it is
first checked against the float64 reference (forward y, and the backward through autograd:
dx, dscale, dshift), a wrong one is written as "wrong result: <errors>" with no time, and a
right one is timed by the same method against adaload's copy of the same bytes. Its name in
peers.json is "peer:<name>" (lnmod_fwd/peer:<name>/<shape>, lnmod_bwd/...), which reports list
with the PyTorch peers.

  MODULE     an importable module (python -c "import MODULE" works from where adaload runs,
             PYTHONPATH counts), or a path to a .py file (it contains a "/" or ends in .py)
  FUNCTION   fn(x, scale, shift, eps) -> y: x [B, S, D] in x's dtype, scale and shift views of
             the modulation that broadcast against x (the layout's chunks of the [B, rows, 6, D]
             modulation), eps the float of the shape; y as x's shape (cast to y's dtype by the
             harness when it is not). Optional attributes: fn.adaload_name (default the
             function's name; [A-Za-z0-9_.-], 1 to 40 characters) and fn.adaload_backward =
             False for a forward-only function (its backward is then neither checked nor timed).

Standard library only: the function's own module may import torch. A bad spec raises
PeerSpecError with a message naming it (torch_peers.py exits 2 on it).
"""
import importlib
import importlib.util
import os
import re

NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")


class PeerSpecError(ValueError):
    pass


def _module(spec, mod):
    if mod.endswith(".py") or "/" in mod:
        if not os.path.isfile(mod):
            raise PeerSpecError("--peer %s: no file %s" % (spec, mod))
        name = "adaload_peer_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(mod))[0])
        s = importlib.util.spec_from_file_location(name, mod)
        m = importlib.util.module_from_spec(s)
        try:
            s.loader.exec_module(m)
        except Exception as ex:
            raise PeerSpecError("--peer %s: %s does not load: %s: %s" % (spec, mod, type(ex).__name__, ex))
        return m
    try:
        return importlib.import_module(mod)
    except Exception as ex:
        raise PeerSpecError("--peer %s: cannot import %s: %s: %s" % (spec, mod, type(ex).__name__, ex))


def load(spec):
    """(name, fn, with_backward) of one MODULE:FUNCTION spec."""
    mod, sep, func = spec.rpartition(":")
    if not sep or not mod or not func:
        raise PeerSpecError("--peer %s: want MODULE:FUNCTION (or path/to/file.py:FUNCTION)" % spec)
    fn = getattr(_module(spec, mod), func, None)
    if not callable(fn):
        raise PeerSpecError("--peer %s: %s has no function %s" % (spec, mod, func))
    label = getattr(fn, "adaload_name", func)
    if not isinstance(label, str) or not NAME_RE.match(label):
        raise PeerSpecError("--peer %s: the name %r is not 1 to 40 characters of A-Z a-z 0-9 _ . -" % (spec, label))
    return "peer:" + label, fn, bool(getattr(fn, "adaload_backward", True))


def load_all(specs):
    """Every spec, in order; two with the same name are refused."""
    out, seen = [], {}
    for spec in specs or ():
        name, fn, bwd = load(spec)
        if name in seen:
            raise PeerSpecError("--peer %s: the name %s is also --peer %s's" % (spec, name, seen[name]))
        seen[name] = spec
        out.append((name, fn, bwd))
    return out
