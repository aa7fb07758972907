"""adaload from Python: the LayerNorm-Modulate kernels and the batch planner of the adaload
C library (libadaload, loaded with ctypes; no compiled extension).

    pip install -e python/                     # from the source tree, after building it
    import adaload.torch as at                 # needs PyTorch
    y = at.lnmod(x, scale, shift)              # fused forward on PyTorch's current stream
    h, out = at.lnmod_res(x, y, gate, scale, shift)   # x + gate*y, then the op (issue 22)
    sampler = at.PlanBatchSampler("plan.jsonl", rank=0, world_size=2)
    from adaload.plan import PlanBatches       # the same batches without PyTorch

The library is found as adaload._lib.find() says ($ADALOAD_LIB, or build/libadaload.so of
this source tree). Errors: adaload.errors (LibraryError, NoCudaError, KernelError, PlanError).
"""
from .errors import AdaloadError, KernelError, LibraryError, NoCudaError, PlanError  # noqa: F401

__version__ = "0.1.0"
