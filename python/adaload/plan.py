"""The planner's output as per-rank micro-batches (pure Python; torch not needed).

    from adaload.plan import PlanBatches
    # From a plan file written by `adaload plan --plan-out plan.jsonl --gpus 2 ...`:
    b = PlanBatches("plan.jsonl", rank=0, world_size=2, start_step=0)
    # Or planned here through libadaload (every rank computes the same plan, no communication),
    # with the defaults and checks of `adaload plan` (any of its options by name):
    b = PlanBatches(manifest="datasets/default.csv", model="wan2.1-1.3b", rank=0, world_size=2,
                    seed=0, epoch=0, window=8)
    for mb in b.microbatches(): ...  # MicroBatch(step, bucket, cost, ids, sync, group_samples,
                                     #            group_tokens, tokens, window)
    for ids in b: ...                # the same ids lists ([] where this rank idles), each a
                                     # PlanIds (a list) carrying the MicroBatch's fields
    b.set_epoch(1)                   # the next epoch's plan (reshuffled; see set_epoch)

The plan is one epoch: the line with "step": k is the k-th step of all ranks, and rank r's
micro-batch in it is the entry with "rank": r (planner/README.md, "Outputs"). `sync` is
true on the last step of a sync group: every step for random, same-bucket and sorted-window,
the last step of each window for lpt and kk (where the ranks run different numbers of
micro-batches and must not all-reduce in between: DDP no_sync). group_samples and
group_tokens are the totals of that sync group over all ranks, the normalizer of a loss
summed over the group's samples (or tokens). A rank that idles in a step gets an empty list,
so every rank runs the same number of steps.

A file ends with an end record ({"end": true, "first_step": F, "steps": K, "gpus": R, ...});
a file without it, or whose step lines do not match it, is refused (a plan cut at a line
boundary is not a plan). start_step N yields exactly what an uninterrupted iteration yields
from step N on (exact resume), but N inside an lpt/kk window (after a step with sync false)
is refused: the gradients accumulated in the window before N are gone; rewind=True starts at
the window's first step instead (the attribute start_step then says where). A file may hold
only steps F.. (what `adaload plan --start-step F` writes); start_step must be at least F (such a file
cannot show a window that began before F).
Only this rank's entry of each line is decoded (the other ranks' are counted, not parsed).
A per-rank file in `adaload plan`'s own layout is read in bulk (_plan_fast: the same checks
by one regular expression per line); any other file, or one that fails a check, line by line.
A per-rank file (`adaload plan --per-rank DIR` writes DIR/rank<r>.jsonl) holds the same
lines with only rank r's entry, and its end record adds "rank": r and "plan_id" (the
identity of the whole plan): it is read in place of the whole plan by rank r only (another
rank, another world_size or a missing "rank" is refused); the attribute plan_id then holds
the identity, which ranks may compare to be sure their files come from one plan (None for
a whole plan file).
Keys of a line other than those named here are ignored.

Every malformed line is a PlanError naming file:line; a plan made for another number of
ranks is an error, not silently re-cut.
"""
import collections
import json
import math
import os
import re
import tempfile

from . import _plan_fast
from .errors import PlanError

MicroBatch = collections.namedtuple(
    "MicroBatch", "step bucket cost ids sync group_samples group_tokens tokens window")


class PlanIds(list):
    """This rank's sample ids of one step (a plain list to a DataLoader), with the step's
    MicroBatch fields as attributes: step, bucket, cost, sync, group_samples, group_tokens,
    tokens, window."""
    __slots__ = ("step", "bucket", "cost", "sync", "group_samples", "group_tokens", "tokens",
                 "window")


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and v == v


def _check_entry(e, r, where):
    if not isinstance(e, dict):
        raise PlanError("%s: ranks[%d] is not an object" % (where, r))
    for k in ("rank", "bucket", "cost", "ids"):
        if k not in e:
            raise PlanError("%s: ranks[%d] has no \"%s\"" % (where, r, k))
    if e["rank"] != r or not _int(e["rank"]):
        raise PlanError("%s: ranks[%d] has \"rank\": %r (ranks must be listed 0, 1, ...)"
                        % (where, r, e["rank"]))
    ids, bucket = e["ids"], e["bucket"]
    if not isinstance(ids, list) or not all(_int(i) or isinstance(i, str) for i in ids):
        raise PlanError("%s: rank %d: \"ids\" must be a list of strings or integers" % (where, r))
    if bucket is None:
        if ids:
            raise PlanError("%s: rank %d: idle (bucket null) but has ids" % (where, r))
    elif not _int(bucket) or bucket < 0:
        raise PlanError("%s: rank %d: \"bucket\" must be a whole number >= 0 or null" % (where, r))
    elif not ids:
        raise PlanError("%s: rank %d: bucket %d but no ids" % (where, r, bucket))
    if not _num(e["cost"]) or e["cost"] < 0:
        raise PlanError("%s: rank %d: \"cost\" must be a number >= 0" % (where, r))
    if "tokens" in e and (not _int(e["tokens"]) or e["tokens"] < 0):
        raise PlanError("%s: rank %d: \"tokens\" must be a whole number >= 0" % (where, r))


def _check_head(d, where):
    """The step-level keys of a decoded line (sync, group totals, window); returns sync."""
    sync = d.get("sync", True)
    if not isinstance(sync, bool):
        raise PlanError("%s: \"sync\" must be true or false" % where)
    for k in ("group_samples", "group_tokens"):
        if k in d and (not _int(d[k]) or d[k] < 0):
            raise PlanError("%s: \"%s\" must be a whole number >= 0" % (where, k))
    w = d.get("window")
    if w is not None and (not _int(w) or w < 0):
        raise PlanError("%s: \"window\" must be a whole number >= 0 or null" % where)
    return sync


def _check_end(end, where, first, count, world_size):
    for k in ("first_step", "steps", "gpus"):
        if not _int(end.get(k)) or end[k] < 0:
            raise PlanError("%s: the end record has no whole number \"%s\"" % (where, k))
    if end["gpus"] != world_size:
        raise PlanError("%s: the plan is for %d ranks, world_size is %d (plan with --gpus %d)"
                        % (where, end["gpus"], world_size, world_size))
    if count != end["steps"] or (count and first != end["first_step"]):
        raise PlanError("%s: the end record says %d steps from step %d, the file holds %d from "
                        "step %s: the file is incomplete or was edited"
                        % (where, end["steps"], end["first_step"], count, first))


def _open(path):
    try:
        return open(path, "r", encoding="utf-8")
    except OSError as e:
        raise PlanError("%s: cannot open the plan: %s" % (path, e.strerror)) from None


def _lines(path):
    """(line number, text, decoded-or-None) for every line; the end record verified. A line
    is decoded here unless it is a step line in `adaload plan`'s own layout (_FAST), which
    callers may decode in part."""
    with _open(path) as f:
        end = None
        for n, line in enumerate(f, 1):
            where = "%s:%d" % (path, n)
            if end is not None:
                raise PlanError("%s: a line after the end record" % where)
            if not line.endswith("\n"):
                raise PlanError("%s: the last line is cut (no line end): the file is incomplete"
                                % where)
            if not line.strip():
                raise PlanError("%s: empty line" % where)
            if line.startswith('{"end":'):
                try:
                    end = json.loads(line)
                except ValueError as e:
                    raise PlanError("%s: not JSON (%s)" % (where, e)) from None
                if not isinstance(end, dict) or end.get("end") is not True:
                    raise PlanError("%s: a bad end record" % where)
                yield n, None, end
                continue
            yield n, line, None
        if end is None:
            raise PlanError("%s: no end record: the file is incomplete (cut at a line boundary?) "
                            "or not written by adaload plan" % path)


# `adaload plan`'s own layout of a step line, whose rank entries need not all be decoded.
_FAST = re.compile(r'\{"step":(\d+),"window":(null|\d+),"sync":(true|false),'
                   r'"group_samples":(\d+),"group_tokens":(\d+),"ranks":\[')
_DEC = json.JSONDecoder()


def _decode(line, where):
    try:
        d = json.loads(line)
    except ValueError as e:
        raise PlanError("%s: not JSON (%s)" % (where, e)) from None
    if not isinstance(d, dict) or "step" not in d or "ranks" not in d:
        raise PlanError("%s: a plan line is {\"step\": k, \"ranks\": [...]}" % where)
    return d


def _check_part(end, where, rank, part):
    """The end record against the file's kind: a per-rank file (part) names its rank and
    the whole plan's identity; a whole plan names no rank."""
    if not part:
        if "rank" in end:
            raise PlanError("%s: the end record names rank %r but the lines hold every rank"
                            % (where, end["rank"]))
        return
    if "rank" not in end:
        raise PlanError("%s: one rank per step line but the end record names no rank "
                        "(not a file of adaload plan --per-rank)" % where)
    if end["rank"] != rank or not _int(end["rank"]):
        raise PlanError("%s: a per-rank file of rank %r, read as rank %d" % (where, end["rank"], rank))
    if not isinstance(end.get("plan_id"), str):
        raise PlanError("%s: the per-rank end record has no \"plan_id\"" % where)


def _part_rank(e, rank, where):
    """A per-rank file's entry must be this rank's."""
    if isinstance(e, dict) and e.get("rank") != rank:
        raise PlanError("%s: a per-rank file of rank %r, read as rank %d" % (where, e.get("rank"), rank))


def _step_lines(path, world_size, rank=None, info=None):
    """Yields (step, head, ranks) per step line, checked: steps consecutive from the first
    line's step, world_size ranks per line. head: dict of sync, window, group_samples,
    group_tokens. ranks: every entry, or with rank given only [entry of that rank]."""
    expect = None
    count = 0
    part = None  # with rank given: True for a per-rank file (one entry per line)
    for n, line, end in _lines(path):
        where = "%s:%d" % (path, n)
        if end is not None:
            _check_end(end, where, expect - count if expect is not None else None, count,
                       world_size)
            if rank is not None:
                _check_part(end, where, rank, bool(part) or (world_size == 1 and "rank" in end))
                if info is not None:
                    info["plan_id"] = end.get("plan_id") if "rank" in end else None
            elif "rank" in end:
                raise PlanError("%s: a per-rank file (rank %r): read it as that rank"
                                % (where, end["rank"]))
            if count == 0:
                raise PlanError("%s: the plan has no steps" % path)
            return
        m = _FAST.match(line) if rank is not None else None
        if m:
            step = int(m.group(1))
            head = {"sync": m.group(3) == "true",
                    "window": None if m.group(2) == "null" else int(m.group(2)),
                    "group_samples": int(m.group(4)), "group_tokens": int(m.group(5))}
            nr = line.count('{"rank":', m.end())
            if part is None:
                part = nr == 1 and world_size > 1
            if nr != (1 if part else world_size):
                raise PlanError("%s: the plan has %d ranks per step, world_size is %d (plan with "
                                "--gpus %d)" % (where, nr, world_size, world_size))
            at = line.find('{"rank":' if part else '{"rank":%d,' % rank, m.end())
            try:
                e, _ = _DEC.raw_decode(line, at) if at >= 0 else (None, 0)
            except ValueError as x:
                raise PlanError("%s: not JSON (%s)" % (where, x)) from None
            if part:
                _part_rank(e, rank, where)
            _check_entry(e, rank, where)
            ranks = [e]
        else:
            d = _decode(line, where)
            step = d["step"]
            if not isinstance(d["ranks"], list):
                raise PlanError("%s: \"ranks\" is not a list" % where)
            if part is None:
                part = len(d["ranks"]) == 1 and world_size > 1 and rank is not None
            if len(d["ranks"]) != (1 if part else world_size):
                raise PlanError("%s: the plan has %d ranks per step, world_size is %d (plan with "
                                "--gpus %d)" % (where, len(d["ranks"]), world_size, world_size))
            for r, e in enumerate(d["ranks"]):
                if part:
                    _part_rank(e, rank, where)
                _check_entry(e, rank if part else r, where)
            head = {"sync": _check_head(d, where), "window": d.get("window"),
                    "group_samples": d.get("group_samples"), "group_tokens": d.get("group_tokens")}
            ranks = d["ranks"] if rank is None else [d["ranks"][0 if part else rank]]
        if expect is None and _int(step) and step >= 0:
            expect = step
        if step != expect or not _int(step):
            raise PlanError("%s: \"step\": %r, expected %s (steps are consecutive whole numbers)"
                            % (where, step, "a whole number >= 0" if expect is None else expect))
        yield step, head, ranks
        expect += 1
        count += 1


def _last_line(path):
    """The file's last line (the end record of a whole file), "" when there is none."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            tail = f.read()
    except OSError:
        return ""
    k = tail.rfind(b"\n", 0, len(tail) - 1)
    return tail[k + 1:].decode("utf-8", "replace") if k >= 0 or len(tail) < 4096 else ""


def _fast_rank(path, world_size, rank, info):
    """rank's MicroBatches of a per-rank file in `adaload plan`'s own layout (_plan_fast),
    or None when the file is not one or fails any check of _step_lines: the caller then
    reads it line by line, which refuses it with the message naming the line."""
    try:
        end = json.loads(_last_line(path))
    except ValueError:
        return None
    if not isinstance(end, dict) or end.get("end") is not True:
        return None
    part = "rank" in end
    if not part and world_size > 1:
        return None  # a whole plan: line by line (see _plan_fast)
    got = _plan_fast.rows(path, rank, MicroBatch)
    if got is None or got[1] != _last_line(path):
        return None
    mine = got[0]
    first = mine[0].step
    where = "%s:%d" % (path, len(mine) + 1)
    if [m.step for m in mine] != list(range(first, first + len(mine))):
        return None
    try:
        _check_end(end, where, first, len(mine), world_size)
        _check_part(end, where, rank, part)
    except PlanError:
        return None
    info["plan_id"] = end.get("plan_id") if part else None
    return mine


def read_steps(path, world_size, with_head=False):
    """Yields (step, ranks) for every step line of a plan file, checked (PlanError on the
    first bad line, on a missing or wrong end record): steps consecutive from the first
    line's step. world_size must equal the number of ranks of every step. with_head: yields
    (step, head, ranks), head = {sync, window, group_samples, group_tokens}."""
    for step, head, ranks in _step_lines(path, world_size):
        yield (step, head, ranks) if with_head else (step, ranks)


def _check_rank(rank, world_size, start_step):
    if not _int(world_size) or world_size < 1:
        raise PlanError("world_size %r: must be a whole number >= 1" % (world_size,))
    if not _int(rank) or not 0 <= rank < world_size:
        raise PlanError("rank %r: must be a whole number in [0, world_size=%d)" % (rank, world_size))
    if not _int(start_step) or start_step < 0:
        raise PlanError("start_step %r: must be a whole number >= 0" % (start_step,))


def model_file(model):
    """A preset name (wan2.1-14b, wan2.1-1.3b, wan2.2-5b: datasets/models/NAME.json of this
    source tree) or a path to a model JSON."""
    if os.sep in model or model.endswith(".json"):
        return model
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = os.path.join(root, "datasets", "models", model + ".json")
    if not os.path.isfile(p):
        raise PlanError("model %r: not a preset of %s (give a path to a model JSON)"
                        % (model, os.path.dirname(p)))
    return p


# The options of `adaload plan` that manifest mode passes on, by kind. The library applies
# the command's defaults to what is not given and the command's checks to what is.
_WHOLE = ("window", "grad_accum", "seed", "epoch", "mem_tokens", "tok_budget")
_REAL = ("gpu_mem_gib", "mem_margin", "flops", "step_time", "comp_budget", "comp_ref_pct", "p",
         "jitter_cv")
_TEXT = ("policy", "assign", "gpu", "act", "comp_model", "oversize", "profile", "parallel")
_FLAG = ("extrapolate",)
OPTIONS = _WHOLE + _REAL + _TEXT + _FLAG


def plan_options(**kw):
    """The name/value strings of adaload_capi_plan for these options (None: the default).
    Whole numbers must be ints in [0, 2^63), reals finite numbers: a PlanError otherwise (a
    seed of 2**64 is not wrapped, a NaN not passed on)."""
    out = []
    for k, v in kw.items():
        if k not in OPTIONS:
            raise PlanError("%s: not an option of the planner (%s)" % (k, ", ".join(OPTIONS)))
        if v is None:
            continue
        if k in _WHOLE:
            if not _int(v) or not 0 <= v < 2 ** 63:
                raise PlanError("%s %r: must be a whole number in [0, 2^63)" % (k, v))
            s = str(v)
        elif k in _FLAG:
            if not isinstance(v, bool):
                raise PlanError("%s %r: must be True or False" % (k, v))
            s = "1" if v else "0"
        elif k in _REAL:
            if not _num(v) or not math.isfinite(v):
                raise PlanError("%s %r: must be a finite number" % (k, v))
            s = repr(float(v))
        else:
            if not isinstance(v, str):
                raise PlanError("%s %r: must be a string" % (k, v))
            s = v
        out += [k.replace("_", "-"), s]
    return out


def make_plan(manifest, plan_out, summary_out=None, model="wan2.1-14b", gpus=1, library=None,
              **options):
    """Plans a manifest through libadaload (adaload_capi_plan) into plan_out (and the summary
    JSON into summary_out), each written to a temporary name in its folder and renamed.
    options: any of OPTIONS (the names of `adaload plan`'s options with _ for -); what is
    not given has the command's default."""
    from . import _lib
    if not _int(gpus) or gpus < 1:
        raise PlanError("gpus %r: must be a whole number >= 1" % (gpus,))
    opts = plan_options(**options) + ["gpus", str(gpus)]
    lib = library or _lib.load()
    outs = [o for o in (plan_out, summary_out) if o]
    tmps = []
    try:
        for o in outs:
            fd, t = tempfile.mkstemp(prefix=".tmp.", dir=os.path.dirname(os.path.abspath(o)))
            os.close(fd)
            tmps.append(t)
        tp = tmps[0] if plan_out else None
        ts = tmps[-1] if summary_out else None
        lib.plan(manifest, model_file(model), opts, tp, ts)
        for t, o in zip(tmps, outs):
            os.replace(t, o)
        tmps = []
    finally:
        for t in tmps:
            if os.path.exists(t):
                os.unlink(t)


class PlanBatches:
    """One rank's micro-batches of a plan (see the module's docstring). plan may hold
    "{epoch}" (plan-{epoch}.jsonl): set_epoch(e) then reads that epoch's file."""

    def __init__(self, plan=None, *, manifest=None, rank=0, world_size=1, start_step=0,
                 rewind=False, model="wan2.1-14b", library=None, epoch=0, **options):
        _check_rank(rank, world_size, start_step)
        if (plan is None) == (manifest is None):
            raise PlanError("give a plan file or a manifest (exactly one of them)")
        if plan is not None and options:
            raise PlanError("planner options (%s) need manifest=..., not a plan file"
                            % ", ".join(sorted(options)))
        plan_options(epoch=epoch, **options)  # checked before any work
        self.rank, self.world_size = rank, world_size
        self._plan, self._manifest, self._model = plan, manifest, model
        self._library, self._options = library, options
        self._want_start, self._rewind = start_step, rewind
        self.set_epoch(epoch)

    def set_epoch(self, epoch):
        """Loads epoch `epoch`'s plan: in manifest mode planned with the seed derived from
        (seed, epoch) (`adaload plan --epoch`); with a plan file, the file named by plan with
        {epoch} replaced (a plan without {epoch} holds one epoch: its end record's). The
        first epoch loaded starts at start_step, later ones at their first step."""
        plan_options(epoch=epoch)
        start = self._want_start if not hasattr(self, "epoch") else 0
        self.epoch = epoch
        if self._plan is not None:
            path = self._plan.replace("{epoch}", str(epoch))
            self._load(path, start)
            return
        with tempfile.TemporaryDirectory(prefix="adaload-plan-") as d:
            path = os.path.join(d, "plan.jsonl")
            make_plan(self._manifest, path, model=self._model, gpus=self.world_size,
                      library=self._library, epoch=epoch, **self._options)
            self._load(path, start)

    def _load(self, path, start_step):
        # Only this rank's entries are kept (and decoded): a 10M-sample plan stays small per rank.
        info = {}
        self._mine = _fast_rank(path, self.world_size, self.rank, info)
        if self._mine is None:  # not adaload plan's own layout, or refused: line by line
            self._mine = [MicroBatch(step, e["bucket"], float(e["cost"]), list(e["ids"]), head["sync"],
                                     head["group_samples"], head["group_tokens"], e.get("tokens"),
                                     head["window"])
                          for step, head, (e,) in _step_lines(path, self.world_size, self.rank, info)]
        self.first_step = self._mine[0].step
        self.plan_id = info.get("plan_id")
        self.steps = self.first_step + len(self._mine)  # one past the last step
        if start_step < self.first_step:
            raise PlanError("start_step %d: %s starts at step %d" % (start_step, path,
                                                                    self.first_step))
        if start_step > self.steps:
            raise PlanError("start_step %d: the plan has only %d steps" % (start_step, self.steps))
        i = start_step - self.first_step
        g = i
        while g > 0 and not self._mine[g - 1].sync:
            g -= 1
        if g != i:
            if not self._rewind:
                raise PlanError("start_step %d: inside the sync window of steps %d..%d (lpt/kk: "
                                "the gradients accumulated since step %d are lost on a restart); "
                                "resume at step %d, or pass rewind=True to start there"
                                % (start_step, g + self.first_step, self._group_end(i),
                                   g + self.first_step, g + self.first_step))
        self.start_step = g + self.first_step
        self._from = g

    def _group_end(self, i):
        while i < len(self._mine) - 1 and not self._mine[i].sync:
            i += 1
        return self._mine[i].step

    def __len__(self):
        return self.steps - self.start_step

    def microbatches(self):
        """MicroBatch records for steps start_step .. steps-1."""
        return iter(self._mine[self._from:])

    def __iter__(self):
        for mb in self._mine[self._from:]:
            ids = PlanIds(mb.ids)
            (ids.step, ids.bucket, ids.cost, _, ids.sync, ids.group_samples, ids.group_tokens,
             ids.tokens, ids.window) = mb
            yield ids
