#!/usr/bin/env python3
# kiln/tools/io_fixtures.py — the files test/test_io_files.cpp exchanges with PyTorch and NumPy.
#
# Writes into OUT (test/io_fixtures):
#   torch_written.safetensors   safetensors.torch.save_file of tensors of every dtype kiln has
#   *.npy, stored.npz, compressed.npz   numpy.save (C and Fortran order, big-endian, bool,
#                               0-d), numpy.savez and numpy.savez_compressed
#   torch_written.txt, numpy_written.txt   the values those hold
#   kiln_written.*              copied from KILN_DIR, where `KILN_IO_EMIT=KILN_DIR
#                               kiln_test_io --gtest_filter=KilnWritten.Emit` wrote them
#   read_by_torch.txt           the values PyTorch (safetensors) and NumPy (npz, npy) load from them
# Each values line: "<file> <name> <dtype> [d0,d1,..] : v0 v1 ...". Run by hand (docs/io.md):
#   mkdir -p /tmp/kio && KILN_IO_EMIT=/tmp/kio build/release/test/kiln_test_io --gtest_filter=KilnWritten.Emit
#   /tmp/pt/bin/python tools/io_fixtures.py /tmp/kio test/io_fixtures
import os
import shutil
import sys

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from golden_values import NAMES, fmt

NUMPY_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.uint8): "u8", np.dtype(np.int8): "i8",
               np.dtype(np.int16): "i16", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
               np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def line(file, name, dtype, shape, values):
    return "%s %s %s [%s] :%s" % (file, name, dtype, ",".join(str(s) for s in shape),
                                  "".join(" " + fmt(v) for v in values))


def torch_line(file, name, t):
    vals = t.reshape(-1).tolist() if t.dtype in (torch.bool,) or not t.is_floating_point() else \
        t.to(torch.float64).reshape(-1).tolist()
    return line(file, name, NAMES[t.dtype], list(t.shape), vals)


def numpy_line(file, name, a):
    dt = a.dtype.newbyteorder("=") if a.dtype.byteorder in "<>" else a.dtype
    vals = a.astype(np.float64).reshape(-1, order="C").tolist() if a.dtype.kind == "f" else \
        [int(v) for v in a.reshape(-1, order="C").tolist()]
    return line(file, name, NUMPY_NAMES[np.dtype(dt)], list(a.shape), vals)


def main(kiln_dir, out):
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    tensors = {
        "weight": torch.randn(3, 4, generator=g),
        "bias": torch.randn(4, generator=g, dtype=torch.float64),
        "half": torch.tensor([0.5, -2.0, 65504.0, 1e-7], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -3.5, 3e38], dtype=torch.bfloat16),
        "steps": torch.tensor([[1, -2], [2 ** 40, -(2 ** 62)]], dtype=torch.int64),
        "i32": torch.tensor([-7, 2 ** 31 - 1], dtype=torch.int32),
        "i16": torch.tensor([-32768, 3], dtype=torch.int16),
        "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 200, 255], dtype=torch.uint8),
        "mask": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 5),
    }
    save_file(tensors, os.path.join(out, "torch_written.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out, "torch_written.txt"), "w") as f:
        for name, t in sorted(tensors.items()):
            f.write(torch_line("torch_written.safetensors", name, t) + "\n")

    rng = np.random.default_rng(0)
    arrays = {
        "c_order.npy": rng.standard_normal((3, 4)).astype(np.float32),
        "fortran_order.npy": np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.25),
        "big_endian.npy": np.array([[1, -2, 70000], [3, 4, -5]], dtype=">i4"),
        "bools.npy": np.array([True, False, False, True]),
        "scalar.npy": np.array(-1.5, dtype=np.float16),
    }
    lines = []
    for file, a in arrays.items():
        np.save(os.path.join(out, file), a)
        lines.append(numpy_line(file, "array", a))
    bundle = {"w": rng.standard_normal((2, 3)), "ids": np.arange(5, dtype=np.int64), "flag": np.array(True),
              "u8": np.array([1, 2, 250], dtype=np.uint8)}
    np.savez(os.path.join(out, "stored.npz"), **bundle)
    np.savez_compressed(os.path.join(out, "compressed.npz"), **bundle)
    for file in ("stored.npz", "compressed.npz"):
        for name, a in sorted(bundle.items()):
            lines.append(numpy_line(file, name, a))
    with open(os.path.join(out, "numpy_written.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    lines = []
    for file in ("kiln_written.safetensors", "kiln_written.npz", "kiln_written.npy"):
        shutil.copy(os.path.join(kiln_dir, file), os.path.join(out, file))
    path = os.path.join(out, "kiln_written.safetensors")
    with safe_open(path, framework="pt") as f:
        if f.metadata() != {"format": "pt", "producer": "kiln"}:
            raise SystemExit("kiln_written.safetensors: metadata %r" % f.metadata())
    for name, t in sorted(load_file(path).items()):
        lines.append(torch_line("kiln_written.safetensors", name, t))
    with np.load(os.path.join(out, "kiln_written.npz")) as z:
        for name in sorted(z.files):
            lines.append(numpy_line("kiln_written.npz", name, z[name]))
    lines.append(numpy_line("kiln_written.npy", "array", np.load(os.path.join(out, "kiln_written.npy"))))
    with open(os.path.join(out, "read_by_torch.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: io_fixtures.py KILN_DIR OUT")
    main(sys.argv[1], sys.argv[2])
