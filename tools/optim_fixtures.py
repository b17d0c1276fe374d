#!/usr/bin/env python3
# kiln/tools/optim_fixtures.py — torch.optim's numbers for test/test_optim_*.cpp.
#
# Writes into OUT (test/optim_fixtures):
#   steps.safetensors      three parameters ("init.<i>"), the gradient of each for six steps
#                          ("grad.<step>.<i>"; parameter 2 has none at step 2, so it is skipped
#                          there), and, for every configuration in CONFIGS, the parameters after
#                          each step ("<config>.<step>.<i>") and the final optimizer state
#                          ("<config>.state.<i>.<key>", "step" as PyTorch keeps it)
#   dtypes.safetensors     AdamW (amsgrad) and SGD (momentum) on f64, bf16 and f16 parameters for
#                          four steps: "init.<dtype>", "grad.<step>.<dtype>", "<opt>.<dtype>" (final);
#                          bf16 and f16 with fused=True (each update computed in f32, rounded once)
#   schedulers.safetensors the lr of 25 steps of each scheduler in SCHEDULERS ("<name>.lr",
#                          f64, index 0 after construction) and, for OneCycleLR, the momentum
#                          ("<name>.momentum")
#   plateau.safetensors    ReduceLROnPlateau's lr after each of the METRICS ("<name>.lr") for each
#                          configuration in PLATEAUS, and a ChainedScheduler of StepLR and
#                          LinearLR over 12 steps ("chained.lr", index 0 after construction), and
#                          24 steps of a chained warm-up and of two SequentialLRs
#                          ("chained_warmup.lr", "sequential.lr", "sequential3.lr")
#   clip.safetensors       clip_grad_norm_ of the step-0 gradients for each norm type in NORMS:
#                          the total norm ("norm.<p>") and the clipped gradients ("clipped.<p>.<i>")
#   resume.safetensors     a kiln training checkpoint (optim/checkpoint.h) of an AdamW (amsgrad)
#                          after three steps on a Linear(3, 2), written from PyTorch's
#                          state_dicts, and resume_expected.safetensors: the grads of steps 3..5
#                          ("grad.<step>.<name>") and the parameters after step 5 ("final.<name>")
# The tests construct the same configurations by name (test/test_optim_rules.cpp).
# Run by hand: /tmp/pt/bin/python tools/optim_fixtures.py test/optim_fixtures
import json
import math
import os
import sys

import torch
from safetensors.torch import save_file

SHAPES = [(5, 3), (3,), (2, 2, 2)]
STEPS = 6

CONFIGS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True, maximize=True),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01),
    "adam_full": lambda p: torch.optim.Adam(p, lr=0.02, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, amsgrad=True),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.05),
    "adamw_full": lambda p: torch.optim.AdamW(p, lr=0.01, amsgrad=True, maximize=True),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01),
    "rmsprop_full": lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.5,
                                                  centered=True),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1),
    "adagrad_full": lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                                  initial_accumulator_value=0.5, eps=1e-8),
    # Two groups: parameter 0 with momentum, parameters 1 and 2 with their own lr.
    "groups": lambda p: torch.optim.SGD([{"params": [p[0]], "momentum": 0.9}, {"params": p[1:], "lr": 0.01}], lr=0.1),
}


def one_param_sgd():
    return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)


def one_param_adam():
    return torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=0.1)


S = torch.optim.lr_scheduler
SCHEDULERS = {
    "step": lambda: S.StepLR(one_param_sgd(), step_size=3, gamma=0.5),
    "cosine": lambda: S.CosineAnnealingLR(one_param_sgd(), T_max=10, eta_min=0.001),
    "linear": lambda: S.LinearLR(one_param_sgd(), start_factor=0.25, end_factor=1.0, total_iters=4),
    "exponential": lambda: S.ExponentialLR(one_param_sgd(), gamma=0.9),
    "multistep": lambda: S.MultiStepLR(one_param_sgd(), milestones=[2, 5, 5, 9], gamma=0.5),
    "lambda": lambda: S.LambdaLR(one_param_sgd(), lr_lambda=lambda e: 1.0 / (1.0 + 0.3 * e)),
    "onecycle": lambda: S.OneCycleLR(one_param_sgd(), max_lr=0.1, total_steps=25),
    "onecycle_adam": lambda: S.OneCycleLR(one_param_adam(), max_lr=0.2, total_steps=25, pct_start=0.4,
                                          anneal_strategy="linear", three_phase=True, div_factor=10.0,
                                          final_div_factor=100.0, base_momentum=0.8, max_momentum=0.9),
}
METRICS = [1.0, 0.9, 0.95, 0.91, 0.92, 0.9, 0.89, 0.93, 0.94, 0.95, 0.96, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
PLATEAUS = {
    "plateau_min": lambda o: S.ReduceLROnPlateau(o, patience=2, cooldown=1, factor=0.5, threshold=0.01),
    "plateau_max_abs": lambda o: S.ReduceLROnPlateau(o, mode="max", patience=1, threshold=0.05, threshold_mode="abs",
                                                     factor=0.2, min_lr=0.004),
}
NORMS = {"2": 2.0, "1": 1.0, "inf": math.inf, "3": 3.0}


def momentum_of(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    init = [torch.randn(s) for s in SHAPES]
    grads = [[torch.randn(s) for s in SHAPES] for _ in range(STEPS)]
    t = {f"init.{i}": x for i, x in enumerate(init)}
    for k in range(STEPS):
        for i, g in enumerate(grads[k]):
            if not (k == 2 and i == 2):
                t[f"grad.{k}.{i}"] = g
    for name, make in CONFIGS.items():
        params = [x.clone().requires_grad_() for x in init]
        opt = make(params)
        for k in range(STEPS):
            for i, p in enumerate(params):
                p.grad = None if (k == 2 and i == 2) else grads[k][i].clone()
            opt.step()
            for i, p in enumerate(params):
                t[f"{name}.{k}.{i}"] = p.detach().clone()
        for i, st in opt.state_dict()["state"].items():
            for key, v in st.items():
                if v is not None:
                    t[f"{name}.state.{i}.{key}"] = v.clone() if torch.is_tensor(v) else torch.tensor(v)
    save_file(t, os.path.join(out, "steps.safetensors"))

    d = {}
    for dt in (torch.float64, torch.bfloat16, torch.float16):
        key = str(dt).replace("torch.", "")
        init_d = torch.randn(7).to(dt)
        grads_d = [torch.randn(7).to(dt) for _ in range(4)]
        d[f"init.{key}"] = init_d
        for k, g in enumerate(grads_d):
            d[f"grad.{k}.{key}"] = g
        fused = dt != torch.float64
        for opt_name, make in (("adamw", lambda p: torch.optim.AdamW(p, lr=0.05, amsgrad=True, fused=fused)),
                               ("sgd", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, fused=fused))):
            p = init_d.clone().requires_grad_()
            opt = make([p])
            for g in grads_d:
                p.grad = g.clone()
                opt.step()
            d[f"{opt_name}.{key}"] = p.detach().clone()
    save_file(d, os.path.join(out, "dtypes.safetensors"))

    s = {}
    for name, make in SCHEDULERS.items():
        sched = make()
        opt = sched.optimizer
        lrs, moms = [sched.get_last_lr()[0]], [momentum_of(opt.param_groups[0])]
        for _ in range(24 if name.startswith("onecycle") else 25):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr()[0])
            moms.append(momentum_of(opt.param_groups[0]))
        s[f"{name}.lr"] = torch.tensor(lrs, dtype=torch.float64)
        if name.startswith("onecycle"):
            s[f"{name}.momentum"] = torch.tensor(moms, dtype=torch.float64)
    save_file(s, os.path.join(out, "schedulers.safetensors"))

    pl = {}
    for name, make in PLATEAUS.items():
        opt = one_param_sgd()
        sched = make(opt)
        lrs = []
        for m in METRICS:
            opt.step()
            sched.step(m)
            lrs.append(opt.param_groups[0]["lr"])
        pl[f"{name}.lr"] = torch.tensor(lrs, dtype=torch.float64)
    opt = one_param_sgd()
    chained = S.ChainedScheduler([S.StepLR(opt, step_size=3, gamma=0.5),
                                  S.LinearLR(opt, start_factor=0.5, end_factor=1.0, total_iters=4)])
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(12):
        opt.step()
        chained.step()
        lrs.append(opt.param_groups[0]["lr"])
    pl["chained.lr"] = torch.tensor(lrs, dtype=torch.float64)
    # A warm-up made first changes the lr, not the base of the schedulers made after it.
    for name, make in (
        ("chained_warmup", lambda o: S.ChainedScheduler([S.LinearLR(o, start_factor=0.25, total_iters=4),
                                                         S.ExponentialLR(o, gamma=0.9)])),
        ("sequential", lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                                    S.CosineAnnealingLR(o, T_max=20, eta_min=0.001)], milestones=[5])),
        ("sequential3", lambda o: S.SequentialLR(o, [S.ExponentialLR(o, gamma=0.8), S.StepLR(o, step_size=2, gamma=0.5),
                                                     S.MultiStepLR(o, milestones=[3, 6], gamma=0.1)],
                                                 milestones=[4, 9])),
    ):
        opt = one_param_sgd()
        sched = make(opt)
        lrs = [opt.param_groups[0]["lr"]]
        for _ in range(24):
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
        pl[f"{name}.lr"] = torch.tensor(lrs, dtype=torch.float64)
    save_file(pl, os.path.join(out, "plateau.safetensors"))

    c = {}
    for key, p in NORMS.items():
        params = [x.clone().requires_grad_() for x in init]
        for i, q in enumerate(params):
            q.grad = grads[0][i].clone()
        c[f"norm.{key}"] = torch.nn.utils.clip_grad_norm_(params, max_norm=1.5, norm_type=p).reshape(())
        for i, q in enumerate(params):
            c[f"clipped.{key}.{i}"] = q.grad.clone()
    save_file(c, os.path.join(out, "clip.safetensors"))

    # A checkpoint PyTorch writes in kiln's layout, resumed by kiln.
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, amsgrad=True)
    sched = S.StepLR(opt, step_size=2, gamma=0.5)
    rgrads = [{n: torch.randn_like(p) for n, p in model.named_parameters()} for _ in range(6)]

    def run(k):
        for n, p in model.named_parameters():
            p.grad = rgrads[k][n].clone()
        opt.step()
        sched.step()

    for k in range(3):
        run(k)
    ck = {f"model.{n}": v.clone() for n, v in model.state_dict().items()}
    sd = opt.state_dict()
    for i, st in sd["state"].items():
        for key, v in st.items():
            ck[f"optim.state.{i}.{key}"] = v.clone()
    groups = [{k: v for k, v in g.items()} for g in sd["param_groups"]]
    meta = {"kiln.optimizer": "AdamW", "kiln.param_groups": json.dumps(groups),
            "kiln.scheduler": json.dumps({"last_epoch": sched.last_epoch, "base_lrs": sched.base_lrs,
                                          "last_lrs": sched.get_last_lr()})}
    save_file(ck, os.path.join(out, "resume.safetensors"), metadata=meta)
    for k in range(3, 6):
        run(k)
    e = {f"grad.{k}.{n}": g for k in range(3, 6) for n, g in rgrads[k].items()}
    e.update({f"final.{n}": p.detach().clone() for n, p in model.named_parameters()})
    e["final_lr"] = torch.tensor([sched.get_last_lr()[0]], dtype=torch.float64)
    save_file(e, os.path.join(out, "resume_expected.safetensors"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "test/optim_fixtures")
