#pragma once
// Umbrella header of gpuperf::gpuperf (LibTorch): gpuperf/core.h and every public header of it.

#include "gpuperf/core.h"

#include "gpuperf/device/cuda_timer.h"
#include "gpuperf/device/device.h"
#include "gpuperf/device/torch_choices.h"
#include "gpuperf/optim/fused_optimizer.h"
#include "gpuperf/amp/autocast.h"
#include "gpuperf/amp/grad_scaler.h"
#include "gpuperf/models/fusion.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/models/resnet.h"
#include "gpuperf/models/simple_model.h"
#include "gpuperf/train/batch_source.h"
#include "gpuperf/train/train_step.h"
#include "gpuperf/train/training_run.h"
#include "gpuperf/infer/inference.h"
#include "gpuperf/infer/inference_run.h"
#include "gpuperf/micro/interconnect.h"
#include "gpuperf/micro/micro.h"
#include "gpuperf/micro/micro_run.h"
