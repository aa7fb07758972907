"""Finding and loading libadaload (the shared library CMake builds beside the adaload
program) with ctypes, and the C declarations the package uses.

    from adaload import _lib
    lib = _lib.load()            # or _lib.load("/path/to/libadaload.so")
    lib.has_cuda                 # the CUDA kernels are in this build
    lib.has_backward             # lnmod_backward is exported (the fused backward kernels)
    lib.has_res                  # lnmod_res_forward / _backward are exported (issue 22's op)

Where the library is looked for, in order: the path given to load(); $ADALOAD_LIB (which
must then exist); build/libadaload.so and build-dev/libadaload.so of the source tree this
package sits in; the system's library path (ctypes.util.find_library). Every failure is a
LibraryError whose message says what was tried and how to build the library.
"""
import ctypes
import ctypes.util
import os

from .errors import KernelError, LibraryError, NoCudaError

CAPI_VERSION = 5

# lnmod_desc.h enums.
DTYPES = {"f32": 0, "f16": 1, "bf16": 2}
LAYOUTS = {"sample": 0, "token": 1, "frame": 2}
# lnmod_res_desc.h enums.
RES_GATES = {"none": 0, "gate": 1}
RES_NORMS = {"modulate": 0, "affine": 1}
LNMOD_OK = 0
LNMOD_ERR_UNSUPPORTED = 11
LNMOD_ERR_NO_DEVICE = 12


class LnmodDesc(ctypes.Structure):
    """Mirror of lnmod_desc (kernels/lnmod_desc.h); checked against the library's own layout
    (adaload_capi_desc_layout) every time a library is loaded."""
    _fields_ = [
        ("rows", ctypes.c_int64),
        ("D", ctypes.c_int64),
        ("rows_per_sample", ctypes.c_int64),
        ("frame_len", ctypes.c_int64),
        ("x_dtype", ctypes.c_int),
        ("mod_dtype", ctypes.c_int),
        ("y_dtype", ctypes.c_int),
        ("layout", ctypes.c_int),
        ("scale_stride", ctypes.c_int64),
        ("shift_stride", ctypes.c_int64),
        ("eps", ctypes.c_double),
    ]


class LnmodResDesc(ctypes.Structure):
    """Mirror of lnmod_res_desc (kernels/lnmod_res_desc.h, the fused gated residual +
    LayerNorm-Modulate op); checked against the library's layout (adaload_capi_res_layout)
    every time a library is loaded, with the four pointer structs below."""
    _fields_ = [
        ("rows", ctypes.c_int64),
        ("D", ctypes.c_int64),
        ("rows_per_sample", ctypes.c_int64),
        ("frame_len", ctypes.c_int64),
        ("layout", ctypes.c_int),
        ("gate", ctypes.c_int),
        ("norm", ctypes.c_int),
        ("res_dtype", ctypes.c_int),
        ("branch_dtype", ctypes.c_int),
        ("mod_dtype", ctypes.c_int),
        ("out_dtype", ctypes.c_int),
        ("gate_stride", ctypes.c_int64),
        ("scale_stride", ctypes.c_int64),
        ("shift_stride", ctypes.c_int64),
        ("eps", ctypes.c_double),
    ]


def _ptrs(*names):
    return [(n, ctypes.c_void_p) for n in names]


class LnmodResFwdIn(ctypes.Structure):
    """lnmod_res_fwd_in: r, y, gate (NULL without a gate), scale, shift (weight, bias under
    the affine norm)."""
    _fields_ = _ptrs("r", "y", "gate", "scale", "shift")


class LnmodResBwdIn(ctypes.Structure):
    """lnmod_res_bwd_in: h (the forward's), y, gate, scale, dout, dh (NULL: zero), mean, rstd."""
    _fields_ = _ptrs("h", "y", "gate", "scale", "dout", "dh", "mean", "rstd")


class LnmodResFwdOut(ctypes.Structure):
    """lnmod_res_fwd_out: h, out, mean, rstd (the last two NULL to skip)."""
    _fields_ = _ptrs("h", "out", "mean", "rstd")


class LnmodResBwdOut(ctypes.Structure):
    """lnmod_res_bwd_out: dr, dy, dgate (NULL without a gate), dscale, dshift."""
    _fields_ = _ptrs("dr", "dy", "dgate", "dscale", "dshift")


RES_STRUCTS = (LnmodResFwdIn, LnmodResBwdIn, LnmodResFwdOut, LnmodResBwdOut)


def res_layout():
    """This package's view of what adaload_capi_res_layout returns (20 values)."""
    return ([ctypes.sizeof(LnmodResDesc)] + [getattr(LnmodResDesc, f[0]).offset
                                             for f in LnmodResDesc._fields_] +
            [ctypes.sizeof(s) for s in RES_STRUCTS])


def _repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def candidates():
    """The paths load() tries when given none, in order (the first existing one wins)."""
    env = os.environ.get("ADALOAD_LIB")
    if env:
        return [env]
    root = _repo_root()
    out = [os.path.join(root, d, "libadaload.so") for d in ("build", "build-dev")]
    found = ctypes.util.find_library("adaload")
    if found:
        out.append(found)
    return out


def find():
    """The path of the library load() would use; LibraryError when there is none."""
    env = os.environ.get("ADALOAD_LIB")
    if env:
        if not os.path.isfile(env):
            raise LibraryError("ADALOAD_LIB=%s: no such file (unset it, or point it at the "
                               "libadaload.so of a build)" % env)
        return env
    tried = candidates()
    for p in tried:
        # find_library returns a bare soname ("libadaload.so") that CDLL resolves itself.
        if os.path.isfile(p) or os.sep not in p:
            return p
    raise LibraryError("libadaload.so not found (looked for %s and on the library path): build it "
                       "with `cmake -S . -B build && cmake --build build` in the source tree, or set "
                       "ADALOAD_LIB to its path" % ", ".join(tried))


def _declare(dll):
    c = ctypes
    dll.adaload_capi_version.restype = c.c_int
    dll.adaload_capi_version.argtypes = []
    dll.adaload_capi_has_cuda.restype = c.c_int
    dll.adaload_capi_has_cuda.argtypes = []
    dll.adaload_capi_desc_layout.restype = c.c_int64
    dll.adaload_capi_desc_layout.argtypes = [c.POINTER(c.c_int64), c.c_int64]
    dll.adaload_capi_plan.restype = c.c_int
    dll.adaload_capi_plan.argtypes = [c.c_char_p, c.c_char_p, c.POINTER(c.c_char_p), c.c_int64,
                                      c.c_char_p, c.c_char_p, c.c_char_p, c.c_size_t]
    dll.adaload_capi_set_device.restype = c.c_int
    dll.adaload_capi_set_device.argtypes = [c.c_int]
    dll.lnmod_strerror.restype = c.c_char_p
    dll.lnmod_strerror.argtypes = [c.c_int]
    dll.lnmod_status_name.restype = c.c_char_p
    dll.lnmod_status_name.argtypes = [c.c_int]
    dll.lnmod_desc_validate.restype = c.c_int
    dll.lnmod_desc_validate.argtypes = [c.POINTER(LnmodDesc)]
    dll.adaload_capi_res_layout.restype = c.c_int64
    dll.adaload_capi_res_layout.argtypes = [c.POINTER(c.c_int64), c.c_int64]
    # The fused residual op's descriptor and pointer rules (pure C, in every build).
    rd = c.POINTER(LnmodResDesc)
    dll.lnmod_res_desc_validate.restype = c.c_int
    dll.lnmod_res_desc_validate.argtypes = [rd]
    dll.lnmod_res_check_fwd_in.restype = c.c_int
    dll.lnmod_res_check_fwd_in.argtypes = [rd, c.POINTER(LnmodResFwdIn)]
    dll.lnmod_res_check_bwd_in.restype = c.c_int
    dll.lnmod_res_check_bwd_in.argtypes = [rd, c.POINTER(LnmodResBwdIn)]
    dll.lnmod_res_check_fwd_out.restype = c.c_int
    dll.lnmod_res_check_fwd_out.argtypes = [rd, c.POINTER(LnmodResFwdOut)]
    dll.lnmod_res_check_bwd_out.restype = c.c_int
    dll.lnmod_res_check_bwd_out.argtypes = [rd, c.POINTER(LnmodResBwdOut)]
    dll.lnmod_res_norm_rows.restype = c.c_int64
    dll.lnmod_res_norm_rows.argtypes = [rd]
    dll.lnmod_res_mod_rows.restype = c.c_int64
    dll.lnmod_res_mod_rows.argtypes = [rd]
    dll.lnmod_res_fwd_min_bytes.restype = c.c_int64
    dll.lnmod_res_fwd_min_bytes.argtypes = [rd, c.c_int]
    dll.lnmod_res_bwd_min_bytes.restype = c.c_int64
    dll.lnmod_res_bwd_min_bytes.argtypes = [rd, c.c_int]
    dll.plan_strerror.restype = c.c_char_p
    dll.plan_strerror.argtypes = [c.c_int]


def _declare_kernels(dll):
    c = ctypes
    vp = c.c_void_p
    dll.lnmod_forward.restype = c.c_int
    dll.lnmod_forward_workspace.restype = c.c_int
    dll.lnmod_forward_workspace.argtypes = [c.c_char_p, c.POINTER(LnmodDesc), c.POINTER(c.c_size_t)]
    dll.lnmod_forward.argtypes = [c.c_char_p, c.POINTER(LnmodDesc), vp, vp, vp, vp, vp, vp, vp,
                                  c.c_size_t, vp]
    if hasattr(dll, "lnmod_backward"):
        # kernels/lnmod.h's backward (issue 18).
        dll.lnmod_backward_workspace.restype = c.c_int
        dll.lnmod_backward_workspace.argtypes = [c.c_char_p, c.POINTER(LnmodDesc),
                                                 c.POINTER(c.c_size_t)]
        dll.lnmod_backward.restype = c.c_int
        dll.lnmod_backward.argtypes = [c.c_char_p, c.POINTER(LnmodDesc), vp, vp, vp, vp, vp, vp,
                                       vp, vp, vp, c.c_size_t, vp]

    if hasattr(dll, "lnmod_res_forward"):
        # kernels/lnmod_res.h (issue 22): the fused gated residual + LayerNorm-Modulate op.
        rd = c.POINTER(LnmodResDesc)
        dll.lnmod_res_forward.restype = c.c_int
        dll.lnmod_res_forward_workspace.restype = c.c_int
        dll.lnmod_res_forward_workspace.argtypes = [c.c_char_p, rd, c.POINTER(c.c_size_t)]
        dll.lnmod_res_forward.argtypes = [c.c_char_p, rd, c.POINTER(LnmodResFwdIn),
                                          c.POINTER(LnmodResFwdOut), vp, c.c_size_t, vp]
        dll.lnmod_res_backward_workspace.restype = c.c_int
        dll.lnmod_res_backward_workspace.argtypes = [c.c_char_p, rd, c.POINTER(c.c_size_t)]
        dll.lnmod_res_backward.restype = c.c_int
        dll.lnmod_res_backward.argtypes = [c.c_char_p, rd, c.POINTER(LnmodResBwdIn),
                                           c.POINTER(LnmodResBwdOut), vp, c.c_size_t, vp]


class Library:
    """A loaded libadaload. Use load() rather than the constructor."""

    def __init__(self, path):
        try:
            dll = ctypes.CDLL(path)
        except OSError as e:
            raise LibraryError("cannot load %s: %s" % (path, e)) from None
        if not hasattr(dll, "adaload_capi_version"):
            raise LibraryError("%s is not libadaload (it has no adaload_capi_version)" % path)
        _declare(dll)
        v = dll.adaload_capi_version()
        if v != CAPI_VERSION:
            raise LibraryError("%s has C API version %d, this package needs %d: rebuild the library "
                               "from the same source tree" % (path, v, CAPI_VERSION))
        lay = (ctypes.c_int64 * 12)()
        dll.adaload_capi_desc_layout(lay, 12)
        mine = [ctypes.sizeof(LnmodDesc)] + [getattr(LnmodDesc, f[0]).offset
                                              for f in LnmodDesc._fields_]
        if list(lay) != mine:
            raise LibraryError("%s: lnmod_desc layout %s differs from this package's %s: rebuild "
                               "the library from the same source tree" % (path, list(lay), mine))
        lay = (ctypes.c_int64 * 20)()
        dll.adaload_capi_res_layout(lay, 20)
        if list(lay) != res_layout():
            raise LibraryError("%s: lnmod_res_desc / lnmod_res_*_in / _out layout %s differs from "
                               "this package's %s: rebuild the library from the same source tree"
                               % (path, list(lay), res_layout()))
        self.path = path
        self.dll = dll
        self.has_cuda = bool(dll.adaload_capi_has_cuda()) and hasattr(dll, "lnmod_forward")
        if self.has_cuda:
            _declare_kernels(dll)
        self.has_backward = self.has_cuda and hasattr(dll, "lnmod_backward")
        self.has_res = self.has_cuda and hasattr(dll, "lnmod_res_forward")

    def require_cuda(self):
        if not self.has_cuda:
            raise NoCudaError("%s was built without the CUDA kernels (no CUDA toolkit at build "
                              "time): rebuild with the toolkit to run lnmod" % self.path)

    def require_res(self):
        """NoCudaError without kernels; LibraryError for a library without lnmod_res_forward."""
        self.require_cuda()
        if not self.has_res:
            raise LibraryError("%s has no lnmod_res_forward (a library built before the fused "
                               "residual op, issue 22): rebuild it from this source tree" % self.path)

    def check(self, status, what):
        """Raises for a non-zero lnmod_status (NoCudaError for LNMOD_ERR_NO_DEVICE)."""
        if status == LNMOD_OK:
            return
        name = self.dll.lnmod_status_name(status).decode()
        msg = "%s: %s (%s)" % (what, self.dll.lnmod_strerror(status).decode(), name)
        if status == LNMOD_ERR_NO_DEVICE:
            raise NoCudaError(msg)
        raise KernelError(msg, name)

    def set_device(self, index):
        self.require_cuda()
        self.check(self.dll.adaload_capi_set_device(int(index)), "CUDA device %d" % index)

    def plan(self, manifest, model_file, options, plan_out, summary_out):
        """adaload_capi_plan with options as name/value strings (adaload.plan.plan_options);
        raises PlanError with the planner's one-line message."""
        from .errors import PlanError

        def b(s):
            return None if s is None else os.fsencode(s)
        err = ctypes.create_string_buffer(512)
        opts = (ctypes.c_char_p * max(1, len(options)))(*[b(o) for o in options])
        st = self.dll.adaload_capi_plan(b(manifest), b(model_file), opts, len(options),
                                        b(plan_out), b(summary_out), err, len(err))
        if st != 0:
            raise PlanError("planner: %s" % (err.value.decode(errors="replace")
                                             or self.dll.plan_strerror(st).decode()))


_loaded = {}


def load(path=None):
    """The library at path (default: find()), loaded once per path."""
    p = path or find()
    if p not in _loaded:
        _loaded[p] = Library(p)
    return _loaded[p]
