# kiln/tools/golden_values.py — what the golden-file scripts (fuzz_golden.py, opdb_golden.py)
# share: kiln's dtype names for torch dtypes and the text of one value.
import math

import torch

DTYPES = {"bool": torch.bool, "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
          "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}
NAMES = {v: k for k, v in DTYPES.items()}


def fmt(v):
    """A value as the C++ readers parse it: integers plain, floats round-trip exact, nan/inf by name."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))
