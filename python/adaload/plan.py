"""The planner's output as per-rank micro-batches (pure Python; torch not needed).

    from adaload.plan import PlanBatches
    # From a plan file written by `adaload plan --plan-out plan.jsonl --gpus 2 ...`:
    b = PlanBatches("plan.jsonl", rank=0, world_size=2, start_step=0)
    # Or planned here through libadaload (every rank computes the same plan, no communication):
    b = PlanBatches(manifest="datasets/default.csv", model="wan2.1-1.3b", policy="dual",
                    assign="random", seed=0, rank=0, world_size=2)
    for ids in b: ...                # one list of sample ids per step ([] where this rank idles)
    for mb in b.microbatches(): ...  # MicroBatch(step, bucket, cost, ids)

The plan is one epoch: the line with "step": k is the k-th synchronous step of all ranks, and
rank r's micro-batch in it is the entry with "rank": r (planner/README.md, "Outputs"). Ids
are the manifest's id column, or its line numbers (ints) when it has none. A rank that idles
in a step gets an empty list, so every rank runs the same number of steps (the gradient
all-reduce needs all of them). start_step N yields exactly what an uninterrupted iteration
yields from step N on (exact resume): steps before N are read, checked and skipped. A file
may also hold only the steps from some step F on (what `adaload plan --start-step F` writes):
its steps must then be consecutive from F, and start_step must be at least F. Keys of a line
other than step, ranks and the ranks' rank, bucket, cost, ids are ignored.

Every malformed line is a PlanError naming file:line; a plan made for another number of
ranks is an error, not silently re-cut.
"""
import collections
import json
import os
import tempfile

from .errors import PlanError

MicroBatch = collections.namedtuple("MicroBatch", "step bucket cost ids")


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


def read_steps(path, world_size):
    """Yields (step, ranks) for every line of a plan file, checked (PlanError on the first
    bad line): steps consecutive from the first line's step. world_size must equal the
    number of ranks of every step."""
    try:
        f = open(path, "r", encoding="utf-8")
    except OSError as e:
        raise PlanError("%s: cannot open the plan: %s" % (path, e.strerror)) from None
    with f:
        expect = None
        for n, line in enumerate(f, 1):
            where = "%s:%d" % (path, n)
            if not line.strip():
                raise PlanError("%s: empty line" % where)
            try:
                d = json.loads(line)
            except ValueError as e:
                raise PlanError("%s: not JSON (%s)" % (where, e)) from None
            if not isinstance(d, dict) or "step" not in d or "ranks" not in d:
                raise PlanError("%s: a plan line is {\"step\": k, \"ranks\": [...]}" % where)
            if expect is None and _int(d["step"]) and d["step"] >= 0:
                expect = d["step"]
            if d["step"] != expect or not _int(d["step"]):
                raise PlanError("%s: \"step\": %r, expected %s (steps are consecutive whole numbers)"
                                % (where, d["step"], "a whole number >= 0" if expect is None else expect))
            ranks = d["ranks"]
            if not isinstance(ranks, list):
                raise PlanError("%s: \"ranks\" is not a list" % where)
            if len(ranks) != world_size:
                raise PlanError("%s: the plan has %d ranks per step, world_size is %d (plan with "
                                "--gpus %d)" % (where, len(ranks), world_size, world_size))
            for r, e in enumerate(ranks):
                _check_entry(e, r, where)
            yield expect, ranks
            expect += 1
        if expect is None:
            raise PlanError("%s: the plan has no steps" % path)


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


def make_plan(manifest, plan_out, summary_out=None, model="wan2.1-14b", policy="dual",
              assign="random", seed=0, gpus=1, gpu_mem_gib=None, p=None, flops=None,
              profile=None, library=None):
    """Plans a manifest through libadaload (adaload_capi_plan) into plan_out (and the summary
    JSON into summary_out), each written to a temporary name in its folder and renamed."""
    from . import _lib
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
        lib.plan(manifest, model_file(model), policy, assign, gpus, gpu_mem_gib, seed, p, flops,
                 profile, tp, ts)
        for t, o in zip(tmps, outs):
            os.replace(t, o)
        tmps = []
    finally:
        for t in tmps:
            if os.path.exists(t):
                os.unlink(t)


class PlanBatches:
    """One rank's micro-batches of a plan (see the module's docstring)."""

    def __init__(self, plan=None, *, manifest=None, rank=0, world_size=1, start_step=0,
                 model="wan2.1-14b", policy="dual", assign="random", seed=0, gpu_mem_gib=None,
                 p=None, flops=None, profile=None, library=None):
        _check_rank(rank, world_size, start_step)
        if (plan is None) == (manifest is None):
            raise PlanError("give a plan file or a manifest (exactly one of them)")
        self.rank, self.world_size, self.start_step = rank, world_size, start_step
        if plan is not None:
            self._load(plan)
        else:
            with tempfile.TemporaryDirectory(prefix="adaload-plan-") as d:
                path = os.path.join(d, "plan.jsonl")
                make_plan(manifest, path, model=model, policy=policy, assign=assign, seed=seed,
                          gpus=world_size, gpu_mem_gib=gpu_mem_gib, p=p, flops=flops,
                          profile=profile, library=library)
                self._load(path)

    def _load(self, path):
        # Only this rank's entries are kept: a 10M-sample plan stays small per rank.
        self._mine = []
        for step, ranks in read_steps(path, self.world_size):
            e = ranks[self.rank]
            self._mine.append(MicroBatch(step, e["bucket"], float(e["cost"]), list(e["ids"])))
        self.first_step = self._mine[0].step
        self.steps = self.first_step + len(self._mine)  # one past the last step
        if self.start_step < self.first_step:
            raise PlanError("start_step %d: %s starts at step %d" % (self.start_step, path,
                                                                    self.first_step))
        if self.start_step > self.steps:
            raise PlanError("start_step %d: the plan has only %d steps" % (self.start_step, self.steps))
        self._from = self.start_step - self.first_step

    def __len__(self):
        return self.steps - self.start_step

    def microbatches(self):
        """MicroBatch(step, bucket, cost, ids) for steps start_step .. steps-1."""
        return iter(self._mine[self._from:])

    def __iter__(self):
        for mb in self._mine[self._from:]:
            yield list(mb.ids)
