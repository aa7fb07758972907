"""The exceptions of the adaload package; all derive from AdaloadError."""


class AdaloadError(Exception):
    """Base class of every error this package raises on purpose."""


class LibraryError(AdaloadError, OSError):
    """libadaload cannot be found or loaded, or it does not match this package."""


class NoCudaError(AdaloadError, RuntimeError):
    """No CUDA device here, or the library was built without the CUDA kernels."""


class KernelError(AdaloadError, RuntimeError):
    """A kernel call returned an error status (its lnmod_status name is .status)."""

    def __init__(self, msg, status=None):
        super().__init__(msg)
        self.status = status


class PlanError(AdaloadError, ValueError):
    """The planner rejected its inputs, or a plan file is malformed (file:line in the message)."""
