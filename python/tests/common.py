"""Shared helpers of the Python package's tests (run by ctest from python/tests.cmake, which
sets ADALOAD_LIB, ADALOAD_BIN and ADALOAD_SOURCE_DIR; PYTHONPATH holds python/)."""
import csv
import os
import sys

SKIP = 77  # ctest's SKIP_RETURN_CODE for "nothing can run here"


def source_dir():
    return os.environ.get("ADALOAD_SOURCE_DIR") or os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def dataset(name):
    return os.path.join(source_dir(), "datasets", name)


def manifest_ids(path):
    """The ids a plan uses for the manifest's samples: the id column, else line numbers."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and "id" in rows[0]:
        return [r["id"] for r in rows]
    return list(range(2, len(rows) + 2))


def skip(why):
    print("SKIP: " + why)
    sys.stdout.flush()
    sys.exit(SKIP)
