"""Small least-squares fits in pure Python (no numpy): the one solver of the calibration
scripts (planner/calibrate/calibrate.py, harness/e2e/e2e_lib.py), which fit the planner's
time and memory models from a few dozen measured points.

    from adaload.fit import lstsq
    x = lstsq([[B * S, 1.0, B] for B, S in points], peaks)   # None: the columns are dependent
"""


def lstsq(rows, ys):
    """The x minimizing sum (row . x - y)^2, by the normal equations in double precision with
    each column scaled to a largest magnitude of 1 (so the system stays well conditioned)
    and partial pivoting; None when the system is singular (a column is a combination of the
    others, or is all zero, over these rows: e.g. a per-sample term from one batch size)."""
    n = len(rows[0])
    sc = [max(abs(r[i]) for r in rows) or 1.0 for i in range(n)]
    rows = [[r[i] / sc[i] for i in range(n)] for r in rows]
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    tiny = 1e-12 * max(abs(a[i][i]) for i in range(n))
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(a[r][c]))
        if not abs(a[piv][c]) > tiny:
            return None
        a[c], a[piv], b[c], b[piv] = a[piv], a[c], b[piv], b[c]
        for r in range(c + 1, n):
            f = a[r][c] / a[c][c]
            a[r] = [x - f * y for x, y in zip(a[r], a[c])]
            b[r] -= f * b[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (b[r] - sum(a[r][k] * x[k] for k in range(r + 1, n))) / a[r][r]
    return [x[i] / sc[i] for i in range(n)]
