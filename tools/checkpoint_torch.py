#!/usr/bin/env python3
# kiln/tools/checkpoint_torch.py — kiln training checkpoints (optim/checkpoint.h) to and from
# PyTorch's state_dicts.
#
#   from checkpoint_torch import load_into, save_from
#   load_into("ckpt.safetensors", model, optimizer, scheduler)   # a kiln file into torch objects
#   save_from("ckpt.safetensors", model, optimizer, scheduler)   # torch objects into a kiln file
#
# The layout: "model.<name>" tensors, "optim.state.<i>.<key>" tensors ("step" a 0-d f32 tensor),
# metadata "kiln.optimizer" (the class name), "kiln.param_groups" (JSON: PyTorch's param_groups
# with parameter indices) and "kiln.scheduler" (last_epoch, base_lrs, last_lrs).
#
# Run as a program, it checks that PyTorch resumes a checkpoint kiln wrote and lands where kiln
# did (the files come from kiln_test_optim's OptimCheckpoint.Emit):
#   mkdir -p /tmp/kck && KILN_OPTIM_EMIT=/tmp/kck build/release/test/kiln_test_optim \
#       --gtest_filter=OptimCheckpoint.Emit && /tmp/pt/bin/python tools/checkpoint_torch.py /tmp/kck
import json
import sys

import torch
from safetensors import safe_open
from safetensors.torch import save_file


def load_into(path, model, optimizer, scheduler=None):
    with safe_open(path, "pt") as f:
        meta = f.metadata()
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    if meta["kiln.optimizer"] != type(optimizer).__name__:
        raise ValueError(f"{path} holds a {meta['kiln.optimizer']} state, not {type(optimizer).__name__}")
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    state = {}
    for k, v in tensors.items():
        if k.startswith("optim.state."):
            index, key = k[len("optim.state."):].split(".", 1)
            state.setdefault(int(index), {})[key] = v
    groups = json.loads(meta["kiln.param_groups"])
    for g in groups:
        if "betas" in g:
            g["betas"] = tuple(g["betas"])
    optimizer.load_state_dict({"state": state, "param_groups": groups})
    if scheduler is not None:
        s = json.loads(meta["kiln.scheduler"])
        scheduler.last_epoch = s["last_epoch"]
        scheduler.base_lrs = s["base_lrs"]
        scheduler._last_lr = s["last_lrs"]
        for g, lr in zip(optimizer.param_groups, s["base_lrs"]):
            g["initial_lr"] = lr


def save_from(path, model, optimizer, scheduler=None):
    t = {f"model.{k}": v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    sd = optimizer.state_dict()
    for i, st in sd["state"].items():
        for key, v in st.items():
            if torch.is_tensor(v):
                t[f"optim.state.{i}.{key}"] = v.clone().contiguous()
    meta = {"kiln.optimizer": type(optimizer).__name__, "kiln.param_groups": json.dumps(sd["param_groups"])}
    if scheduler is not None:
        meta["kiln.scheduler"] = json.dumps({"last_epoch": scheduler.last_epoch, "base_lrs": scheduler.base_lrs,
                                             "last_lrs": scheduler.get_last_lr()})
    save_file(t, path, metadata=meta)


def check_resume(directory):
    """PyTorch resumes kiln's checkpoint with the gradients of OptimCheckpoint.Emit's train()."""
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.02, amsgrad=True)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    load_into(f"{directory}/kiln_ckpt.safetensors", model, opt, sched)
    for k in range(3, 6):
        for p in model.parameters():
            p.grad = torch.full_like(p, 0.1 * (k + 1)) + torch.arange(p.numel()).reshape(p.shape).float() * 0.01
        opt.step()
        sched.step()
    with safe_open(f"{directory}/kiln_final.safetensors", "pt") as f:
        for name, p in model.named_parameters():
            want = f.get_tensor(name)
            err = (p.detach() - want).abs().max().item()
            print(f"{name}: max |torch - kiln| = {err:.3g}")
            assert torch.allclose(p.detach(), want, rtol=1e-5, atol=1e-6), name
    print("PyTorch resumed kiln's checkpoint and matches kiln's run")


if __name__ == "__main__":
    check_resume(sys.argv[1])
