"""The step lines of a per-rank plan file (`adaload plan --per-rank`) in bulk.

The reader of adaload.plan decodes a file line by line (every key checked, every error named
by file:line); at 10 M samples that per-line work of Python was most of the time a rank took
to read its file. For the lines `adaload plan` itself writes (planner/plan_output.c: keys in
its order, JSON numbers without sign or leading zeros, ids all whole numbers or all strings
without escapes) one regular expression per line says everything those checks say of a
line: its head (step, window, sync, group totals: whole numbers, null or true/false), one
entry, {"rank":r,...} of the rank asked for, idle exactly as bucket null, cost 0, tokens 0,
no ids, or busy with a whole bucket, a number cost >= 0, whole tokens and at least one id.
Blocks of lines are matched at once and turned into columns, so what Python does per line
is a few conversions.

rows(path, rank, make) -> (rows, last line) or None when any line but the last is not in
that layout, or the file does not end with a line end: the caller then reads the file line
by line, which names what is wrong. rows: make(step, bucket, cost, ids, sync, group_samples,
group_tokens, tokens, window) per step line (MicroBatch's order; an idle entry is bucket
None, cost 0.0, ids [], tokens 0); that the steps are consecutive and what the last line
(the end record) says are the caller's to check. (A whole plan's line holds every rank's
entry; matching them all costs more than the line-by-line reader, which decodes one.)
"""
import gc
import re

_N = r"(?:0|[1-9][0-9]*)"                       # a JSON whole number >= 0
_F = _N + r"(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"  # a JSON number >= 0
_S = r'"[^"\\\x00-\x1f]*"'                      # a JSON string without escapes
_IDS = r"%s(?:,%s)*|%s(?:,%s)*" % (_N, _N, _S, _S)
_IDLE = r'"bucket":null,"cost":0,"tokens":0,"ids":\[\]'
_BUSY = r'"bucket":(%s),"cost":(%s),"tokens":(%s),"ids":\[(%s)\]' % (_N, _F, _N, _IDS)

# A line begins after the "\n" of the one before (the block is given a leading "\n"), and
# ends where the next "\n" is: a match is one whole line, and as many matches as lines
# means every line matched. The literal "\n{" start lets the engine skip to candidates.
_HEAD = (r'\n\{"step":(%s),"window":(null|%s),"sync":(true|false),"group_samples":(%s),'
         r'"group_tokens":(%s),"ranks":\[' % (_N, _N, _N, _N))
_TAIL = r"\]\}(?=\n)"
_BLOCK = 1 << 24  # characters read at once

_cache = {}


def _line_re(rank):
    """A step line of rank's per-rank file, its fields as groups."""
    if rank not in _cache:
        _cache.clear()  # one reader at a time needs one pattern
        _cache[rank] = re.compile(_HEAD + r'\{"rank":%d,(?:%s|%s)\}' % (rank, _IDLE, _BUSY) + _TAIL)
    return _cache[rank]


def _ids(s):
    if not s:
        return []
    if s[0] == '"':
        return s[1:-1].split('","')
    return list(map(int, s.split(",")))


def _rows(found, make):
    """The groups of the matched lines, column by column, into make(...) per line."""
    st, win, sy, gs, gt, b, c, tk, ids = zip(*found)
    return list(map(make, map(int, st), [int(x) if x else None for x in b],
                    [float(x) if x else 0.0 for x in c], map(_ids, ids), map("true".__eq__, sy),
                    map(int, gs), map(int, gt), [int(x) if x else 0 for x in tk],
                    [None if x == "null" else int(x) for x in win]))


def rows(path, rank, make):
    # The cyclic collector would walk the young objects again and again while millions are
    # made (a third of the time); none of them can form a cycle.
    was = gc.isenabled()
    gc.disable()
    try:
        return _read(path, _line_re(rank), make)
    finally:
        if was:
            gc.enable()


def _read(path, pat, make):
    out = []
    tail = ""
    with open(path, "r", encoding="utf-8") as f:
        while True:
            block = f.read(_BLOCK)
            if not block:
                break
            block = tail + block
            # hold back the block's last line (at the end of the file: the end record)
            k = block.rfind("\n", 0, len(block) - 1) + 1
            body, tail = block[:k], block[k:]
            if not body:
                continue
            found = pat.findall("\n" + body)
            if len(found) != body.count("\n"):
                return None
            out.extend(_rows(found, make))
    if not out or not tail.endswith("\n") or tail.count("\n") != 1:
        return None
    return out, tail
