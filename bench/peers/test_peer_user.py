"""peer_user.py's loading of `--peer MODULE:FUNCTION` (standard library only, no PyTorch):
a module name and a file path load, the name and backward attributes are read, and every
bad spec is refused with a message naming it: no colon, no such module or file, a module
that raises, no such function, a bad name, two peers of one name."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_user  # noqa: E402

GOOD = """
def mine(x, scale, shift, eps):
    return x
def other(x, scale, shift, eps):
    return x
other.adaload_name = "mine"
def fwd_only(x, scale, shift, eps):
    return x
fwd_only.adaload_backward = False
fwd_only.adaload_name = "fast.v2"
def badname(x, scale, shift, eps):
    return x
badname.adaload_name = "a/b"
notfn = 3
"""


class Load(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.path = os.path.join(self.d, "mypeers.py")
        with open(self.path, "w") as f:
            f.write(GOOD)
        with open(os.path.join(self.d, "broken.py"), "w") as f:
            f.write("raise RuntimeError('no GPU here')\n")

    def refused(self, spec, what):
        with self.assertRaises(peer_user.PeerSpecError) as c:
            peer_user.load_all([spec] if isinstance(spec, str) else spec)
        msg = str(c.exception)
        self.assertIn(what, msg)
        self.assertTrue(msg.startswith("--peer "), msg)

    def test_file_and_module(self):
        name, fn, bwd = peer_user.load(self.path + ":mine")
        self.assertEqual((name, bwd), ("peer:mine", True))
        self.assertEqual(fn(5, 0, 0, 1e-6), 5)
        self.assertEqual(peer_user.load(self.path + ":fwd_only")[0::2], ("peer:fast.v2", False))
        sys.path.insert(0, self.d)
        try:
            self.assertEqual(peer_user.load("mypeers:mine")[0], "peer:mine")
        finally:
            sys.path.remove(self.d)
        self.assertEqual(peer_user.load_all([]), [])

    def test_refusals(self):
        self.refused("nocolon", "want MODULE:FUNCTION")
        self.refused(":fn", "want MODULE:FUNCTION")
        self.refused(self.path + ":", "want MODULE:FUNCTION")
        self.refused("no_such_module_adaload:fn", "cannot import no_such_module_adaload")
        self.refused(os.path.join(self.d, "missing.py") + ":fn", "no file")
        self.refused(os.path.join(self.d, "broken.py") + ":fn", "does not load: RuntimeError: no GPU here")
        self.refused(self.path + ":nothere", "has no function nothere")
        self.refused(self.path + ":notfn", "has no function notfn")
        self.refused(self.path + ":badname", "'a/b' is not 1 to 40 characters")
        self.refused([self.path + ":mine", self.path + ":other"], "the name peer:mine is also")


if __name__ == "__main__":
    unittest.main()
