// kiln/optim/optim.h — kiln::optim, shaped like libtorch's torch::optim (docs/optim.md):
// optimizers whose step is one compiled program, gradient clipping, learning-rate schedulers
// and training checkpoints.
#pragma once

#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/checkpoint.h"
#include "optim/clip_grad.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"
#include "optim/plateau.h"
#include "optim/rmsprop.h"
#include "optim/scheduler_chain.h"
#include "optim/sgd.h"
