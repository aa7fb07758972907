"""Loading libadaload with ctypes: where it is looked for, the errors when it is missing or
wrong, the struct mirror against the library's own layout, and the clear errors without
CUDA kernels, without a GPU and without PyTorch. CPU only."""
import ctypes
import ctypes.util
import importlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

from adaload import _lib
from adaload.errors import LibraryError, NoCudaError

LIB = os.environ.get("ADALOAD_LIB")
EXPECT_CUDA = os.environ.get("ADALOAD_EXPECT_CUDA") == "1"


def in_child(code, **env):
    """Runs code in a fresh interpreter (so no library is cached) with env changes."""
    e = dict(os.environ)
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True)


class Find(unittest.TestCase):
    def test_env_path_must_exist(self):
        r = in_child("from adaload import _lib; _lib.load()", ADALOAD_LIB="/nonexistent/libadaload.so")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryError: ADALOAD_LIB=/nonexistent/libadaload.so: no such file", r.stderr)

    def test_not_a_library(self):
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"not an ELF file\n")
            f.flush()
            with self.assertRaises(LibraryError) as c:
                _lib.Library(f.name)
            self.assertIn("cannot load " + f.name, str(c.exception))

    def test_another_library(self):
        libm = ctypes.util.find_library("m")
        if not libm:
            self.skipTest("no libm on the library path")
        with self.assertRaises(LibraryError) as c:
            _lib.Library(libm)
        self.assertIn("is not libadaload", str(c.exception))

    def test_not_found_says_how_to_build(self):
        # A copy of the package outside any source tree, with no ADALOAD_LIB.
        with tempfile.TemporaryDirectory() as d:
            pkg = os.path.join(d, "a", "b")
            os.makedirs(pkg)
            src = os.path.dirname(os.path.abspath(_lib.__file__))
            subprocess.run(["cp", "-r", src, pkg], check=True)
            r = in_child("import sys; sys.path.insert(0, %r); import ctypes.util; "
                         "ctypes.util.find_library = lambda n: None; "
                         "from adaload import _lib; _lib.load()" % pkg, ADALOAD_LIB=None,
                         PYTHONPATH=None)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("libadaload.so not found", r.stderr)
            self.assertIn("cmake --build build", r.stderr)


@unittest.skipUnless(LIB, "ADALOAD_LIB not set")
class Loaded(unittest.TestCase):
    def setUp(self):
        self.lib = _lib.load(LIB)

    def test_layout_and_validation_through_the_mirror(self):
        d = _lib.LnmodDesc(rows=6, D=4, rows_per_sample=3, frame_len=1, x_dtype=2, mod_dtype=0,
                           y_dtype=2, layout=0, scale_stride=24, shift_stride=24, eps=1e-6)
        self.assertEqual(self.lib.dll.lnmod_desc_validate(ctypes.byref(d)), 0)
        d.D = 0
        st = self.lib.dll.lnmod_desc_validate(ctypes.byref(d))
        self.assertEqual(self.lib.dll.lnmod_status_name(st).decode(), "LNMOD_ERR_ZERO_DIM")
        d.D, d.rows = 4, 7
        st = self.lib.dll.lnmod_desc_validate(ctypes.byref(d))
        self.assertEqual(self.lib.dll.lnmod_status_name(st).decode(), "LNMOD_ERR_SHAPE")
        d.rows, d.scale_stride = 6, 3
        st = self.lib.dll.lnmod_desc_validate(ctypes.byref(d))
        self.assertEqual(self.lib.dll.lnmod_status_name(st).decode(), "LNMOD_ERR_STRIDE")
        d.scale_stride, d.eps = 24, 0.0
        st = self.lib.dll.lnmod_desc_validate(ctypes.byref(d))
        self.assertEqual(self.lib.dll.lnmod_status_name(st).decode(), "LNMOD_ERR_EPS")

    def test_has_cuda_matches_the_build(self):
        self.assertEqual(self.lib.has_cuda, EXPECT_CUDA)

    def test_without_kernels_or_gpu_a_clear_error(self):
        if not self.lib.has_cuda:
            with self.assertRaises(NoCudaError) as c:
                self.lib.require_cuda()
            self.assertIn("built without the CUDA kernels", str(c.exception))
            with self.assertRaises(NoCudaError):
                self.lib.set_device(0)
            return
        try:
            self.lib.set_device(0)
        except NoCudaError as e:
            self.assertIn("LNMOD_ERR_NO_DEVICE", str(e))
        else:
            self.skipTest("a CUDA device is present")
        with self.assertRaises(NoCudaError):
            self.lib.set_device(4096)

    def test_status_messages(self):
        with self.assertRaises(Exception) as c:
            self.lib.check(1, "lnmod_forward(dtile)")
        self.assertIn("LNMOD_ERR_NULL_POINTER", str(c.exception))
        self.assertIn("lnmod_forward(dtile)", str(c.exception))


class NoTorch(unittest.TestCase):
    def test_import_error_names_pytorch(self):
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("PyTorch is installed here")
        with self.assertRaises(ImportError) as c:
            importlib.import_module("adaload.torch")
        self.assertIn("adaload.torch needs PyTorch", str(c.exception))


if __name__ == "__main__":
    unittest.main()
