// kiln/kiln/kiln.h — the umbrella header: everything a user of kiln needs.
//
// It sits above every layer (it includes the frontend and the runtime), in a folder of its
// own so that no layer includes one above it. In-tree code and an installed kiln alike
// include it as "kiln/kiln.h" / <kiln/kiln.h>.
#pragma once

#include "base/device.h"
#include "base/dtype.h"
#include "base/error.h"
#include "frontend/autograd.h"
#include "frontend/from_blob.h"
#include "frontend/function_transforms.h"
#include "frontend/custom_op.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_conv.h"
#include "frontend/ops_activation.h"
#include "frontend/ops_attention.h"
#include "frontend/ops_dropout.h"
#include "frontend/ops_linear.h"
#include "frontend/ops_moments.h"
#include "frontend/ops_norm.h"
#include "frontend/ops_pool.h"
#include "frontend/ops_resample.h"
#include "frontend/ops_softmax.h"
#include "frontend/ops_sort.h"
#include "frontend/promotion.h"
#include "frontend/ops_random.h"
#include "base/scalar.h"
#include "frontend/tensor.h"
#include "frontend/tracer.h"
#include "frontend/ops_view.h"
#include "io/dlpack.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "runtime/compile/compile.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/extend.h"
