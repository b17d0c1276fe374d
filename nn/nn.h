// kiln/nn/nn.h — kiln::nn, shaped like libtorch's C++ frontend (docs/nn.md): modules and their
// holders, initialization, the functional forms, and compile(module).
#pragma once

#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/compiled_module.h"
#include "nn/container.h"
#include "nn/conv.h"
#include "nn/embedding.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/normalization.h"
#include "nn/ordered_dict.h"
#include "nn/pooling.h"
