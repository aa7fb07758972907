"""replay_torch.py -- the PyTorch executor of the replayed-ranks experiment (replay_lib's
executor interface): harness/e2e/model.py's DiT, one micro-batch at a time, forward +
backward timed with CUDA events (the host clock on the CPU), peak allocated memory per
micro-batch, gradients accumulated until optimizer_step(). Needs PyTorch.

    ex = TorchExecutor(model_opts, kernel="torch", device="cuda")
    ex.reset()                          # the initial weights and a fresh AdamW, per configuration
    t, peak = ex.microbatch(bucket, n, weight, seed)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import replay_lib  # noqa: E402
import train  # noqa: E402  (sets the no-multicast variables before torch is imported)


class TorchExecutor:
    def __init__(self, opts, kernel, device):
        """opts: a namespace with width, depth, heads, ffn, text_len, lr, seed (train.py's)."""
        import torch
        self.torch, self.opts, self.kernel = torch, opts, kernel
        self.d = train.Dev(torch, device)
        self.m, self.opt = train.build(opts, torch, kernel, self.d)
        # The starting weights of every configuration, kept in host memory: a device copy
        # (0.85 GB for the 4-block width-1536 DiT) is not part of any trainer's memory, and
        # it put every replayed micro-batch's peak 0.93-1.0 GB above the planner's model on
        # the H200 (runs 2026-12-02T045424Z / 050252Z, memory meas/model 1.04-1.08).
        self.init = {k: v.detach().to("cpu", copy=True) for k, v in self.m.state_dict().items()}
        self.gen = torch.Generator(device=self.d.dev)
        self.ev = self.d.marks(2)

    def reset(self):
        """The same starting point for every configuration: initial weights, fresh AdamW."""
        self.opt.zero_grad(set_to_none=True)
        self.m.load_state_dict(self.init)
        self.opt = train.make_opt(self.opts, self.torch, self.m, self.d)
        self.d.empty_cache()

    def microbatch(self, bucket, n, weight, seed):
        torch, d = self.torch, self.d
        self.gen.manual_seed(seed)
        try:
            inputs = train.batch_inputs(torch, self.m, bucket, n, self.gen, d)
            d.sync()
            d.reset_peak()
            self.ev.mark(0)
            train.fwd_bwd(torch, self.m, inputs, weight, d)
            self.ev.mark(1)
            d.sync()
        except torch.cuda.OutOfMemoryError as e:
            inputs = None
            self.opt.zero_grad(set_to_none=True)
            d.empty_cache()
            raise replay_lib.OutOfMemory("%d x %d tokens: %s" % (n, bucket["tokens"],
                                                                 str(e).splitlines()[0]))
        del inputs
        return self.ev.seconds(0, 1), d.peak()

    def idle_bytes(self):
        return self.d.allocated()

    def optimizer_step(self):
        d = self.d
        d.sync()
        self.ev.mark(0)
        self.opt.step()
        self.opt.zero_grad(set_to_none=False)
        self.ev.mark(1)
        d.sync()
        return self.ev.seconds(0, 1)

    def zero_grad(self):
        self.opt.zero_grad(set_to_none=False)

    def total_bytes(self):
        return self.d.total_bytes()

    def device_name(self):
        return self.d.name()

    def op_bench(self, shapes, repeats):
        """{(samples, tokens): {kind: {fwd_s, bwd_s}}}: the op alone (train.op_times)."""
        kinds = ("torch", "adaload") if self.d.cuda else ("torch",)
        return {(r["batch"], r["tokens"]): {k: r[k] for k in kinds}
                for r in train.op_times(self.torch, self.d, shapes, self.opts.width, repeats, kinds)}
