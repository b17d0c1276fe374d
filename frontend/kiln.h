// kiln/frontend/kiln.h — the umbrella header: everything a user of kiln needs.
//
// In-tree code includes "frontend/kiln.h"; an installed kiln is included as <kiln/kiln.h>.
#pragma once

#include "base/device.h"
#include "base/dtype.h"
#include "base/error.h"
#include "frontend/custom_op.h"
#include "frontend/factories.h"
#include "frontend/ops.h"
#include "frontend/ops_conv.h"
#include "frontend/ops_fold.h"
#include "frontend/ops_linalg.h"
#include "frontend/ops_nn.h"
#include "frontend/ops_norm.h"
#include "frontend/ops_pool.h"
#include "frontend/ops_resample.h"
#include "frontend/ops_sort.h"
#include "frontend/promotion.h"
#include "frontend/random.h"
#include "base/scalar.h"
#include "frontend/tensor.h"
#include "frontend/tracer.h"
#include "frontend/views.h"
#include "runtime/compile.h"
#include "runtime/cuda_device.h"
#include "runtime/extend.h"
