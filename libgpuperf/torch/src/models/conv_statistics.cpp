// The convolution with its output's per-channel sums (conv_statistics.h), through cuDNN's backend
// descriptors: one operation graph of a forward convolution (fp32 accumulation) and a GenStats
// operation (sum and sum of squares, fp32), one execution plan per shape.

#include "models/conv_statistics.h"

#include <ATen/Context.h>
#include <ATen/ops/empty.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "models/kernel_dtype.h"

#if GPUPERF_WITH_CUDNN
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cudnn/Handle.h>
#include <ATen/native/ConvUtils.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "gpuperf/base/log.h"
#endif

namespace gpuperf::detail {

bool conv_statistics_applies(const at::Tensor& x, const at::Tensor& weight) {
#if GPUPERF_WITH_CUDNN
  if (!x.defined() || !weight.defined() || !x.is_cuda() || x.dim() != 4 || weight.dim() != 4)
    return false;
  if (x.scalar_type() != at::kHalf && x.scalar_type() != at::kBFloat16) return false;
  if (weight.scalar_type() != x.scalar_type() || weight.device() != x.device()) return false;
  if (!at::globalContext().userEnabledCuDNN() || !at::Context::hasCuDNN()) return false;
  // GenStats adds the sums in no fixed order: two runs differ in the last bits (measured on the
  // H200), so not where PyTorch is asked for deterministic results.
  if (at::globalContext().deterministicCuDNN() || at::globalContext().deterministicAlgorithms())
    return false;
  if (!x.is_contiguous(at::MemoryFormat::ChannelsLast) ||
      !weight.is_contiguous(at::MemoryFormat::ChannelsLast))
    return false;
  if (!detail::aligned16(x) || !detail::aligned16(weight)) return false;
  return x.size(1) == weight.size(1) && x.size(1) % 8 == 0 && weight.size(0) % 8 == 0 &&
         x.numel() > 0 && weight.numel() > 0;
#else
  (void)x;
  (void)weight;
  return false;
#endif
}

#if GPUPERF_WITH_CUDNN

namespace {

[[noreturn]] void fail(cudnnStatus_t status, const char* what) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  throw Error(std::string("cuDNN graph (convolution + statistics): ") + what + ": " +
              cudnnGetErrorString(status) + (detail[0] != 0 ? std::string(": ") + detail : ""));
}

void check(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) fail(status, what);
}

// One backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    check(cudnnBackendCreateDescriptor(type, &d_), "create descriptor");
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  [[nodiscard]] cudnnBackendDescriptor_t get() const { return d_; }

  template <typename T>
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                  const T& value) {
    check(cudnnBackendSetAttribute(d_, name, type, 1, &value), "set attribute");
    return *this;
  }
  Descriptor& set(cudnnBackendAttributeName_t name, const std::vector<std::int64_t>& values) {
    check(cudnnBackendSetAttribute(d_, name, CUDNN_TYPE_INT64,
                                   static_cast<std::int64_t>(values.size()), values.data()),
          "set attribute");
    return *this;
  }
  Descriptor& set(cudnnBackendAttributeName_t name, const Descriptor& other) {
    cudnnBackendDescriptor_t o = other.get();
    check(cudnnBackendSetAttribute(d_, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o),
          "set attribute");
    return *this;
  }
  // Finalizes; false (not a throw) when cuDNN does not support what was described.
  bool try_finalize() { return cudnnBackendFinalize(d_) == CUDNN_STATUS_SUCCESS; }
  void finalize(const char* what) { check(cudnnBackendFinalize(d_), what); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Descriptors = std::vector<std::unique_ptr<Descriptor>>;

// The tensors' unique ids in the graph and in each call's variant pack.
enum : std::int64_t { kX = 1, kW, kY, kSum, kSquares };

Descriptor& tensor(Descriptors& keep, std::int64_t uid, cudnnDataType_t type,
                   const std::vector<std::int64_t>& sizes,
                   const std::vector<std::int64_t>& strides) {
  keep.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  Descriptor& t = *keep.back();
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, sizes)
      .set(CUDNN_ATTR_TENSOR_STRIDES, strides)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, std::int64_t{16});
  t.finalize("tensor descriptor");
  return t;
}

// conv(x, weight)'s [N, K, P, Q] (ATen's formula).
std::vector<std::int64_t> output_sizes(const at::Tensor& x, const at::Tensor& weight,
                                       at::IntArrayRef stride, at::IntArrayRef padding,
                                       at::IntArrayRef dilation) {
  return at::native::conv_output_size(x.sizes(), weight.sizes(), padding, stride, dilation);
}

std::vector<std::int64_t> channels_last_strides(const std::vector<std::int64_t>& s) {
  return {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
}

}  // namespace

// One shape's graph and the plan chosen for it, on `handle`; the descriptors the plan was built
// from live as long as it does.
struct ConvStatisticsPlan {
  Descriptors keep;
  std::unique_ptr<Descriptor> plan;
  std::int64_t workspace = 0;
  cudnnHandle_t handle = nullptr;
  std::vector<std::int64_t> output_sizes;  ///< y's [N, K, P, Q]
};

namespace {

using Plan = ConvStatisticsPlan;

// The operation graph for these operands, or null when cuDNN cannot describe it.
std::unique_ptr<Descriptor> build_graph(cudnnHandle_t handle, Descriptors& keep,
                                        const at::Tensor& x, const at::Tensor& weight,
                                        at::IntArrayRef stride, at::IntArrayRef padding,
                                        at::IntArrayRef dilation) {
  const cudnnDataType_t type = x.scalar_type() == at::kHalf ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
  const std::vector<std::int64_t> y_sizes = output_sizes(x, weight, stride, padding, dilation);
  const std::vector<std::int64_t> per_channel{1, weight.size(0), 1, 1};
  // channels_last strides as ATen gives them for dense tensors (conv_statistics_applies holds
  // both in that layout), whatever strides a dimension of size 1 happens to have.
  Descriptor& xd = tensor(keep, kX, type, x.sizes().vec(), channels_last_strides(x.sizes().vec()));
  Descriptor& wd =
      tensor(keep, kW, type, weight.sizes().vec(), channels_last_strides(weight.sizes().vec()));
  Descriptor& yd = tensor(keep, kY, type, y_sizes, channels_last_strides(y_sizes));
  Descriptor& sum = tensor(keep, kSum, CUDNN_DATA_FLOAT, per_channel, {per_channel[1], 1, 1, 1});
  Descriptor& squares =
      tensor(keep, kSquares, CUDNN_DATA_FLOAT, per_channel, {per_channel[1], 1, 1, 1});

  keep.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  Descriptor& conv = *keep.back();
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, std::int64_t{2})
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, padding.vec())
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, padding.vec())
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, stride.vec())
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, dilation.vec());
  conv.finalize("convolution descriptor");

  const float alpha = 1.0f;
  const float beta = 0.0f;
  keep.push_back(
      std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR));
  Descriptor& forward = *keep.back();
  forward.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, xd)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, wd)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, yd)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, alpha)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, beta);
  if (!forward.try_finalize()) return nullptr;

  keep.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR));
  Descriptor& stats = *keep.back();
  stats.set(CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, CUDNN_GENSTATS_SUM_SQSUM)
      .set(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, yd)
      .set(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum)
      .set(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, squares);
  if (!stats.try_finalize()) return nullptr;

  auto graph = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  const std::vector<cudnnBackendDescriptor_t> ops{forward.get(), stats.get()};
  check(cudnnBackendSetAttribute(graph->get(), CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 static_cast<std::int64_t>(ops.size()), ops.data()),
        "set operations");
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle);
  if (!graph->try_finalize()) return nullptr;
  return graph;
}

// The engine configurations the heuristics offer, best first (mode A, then the fallback list).
Descriptors engine_configs(const Descriptor& graph, Descriptors& keep) {
  Descriptors configs;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    keep.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
    Descriptor& heuristics = *keep.back();
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
    if (!heuristics.try_finalize()) continue;
    std::int64_t count = 0;
    if (cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                 nullptr) != CUDNN_STATUS_SUCCESS ||
        count <= 0)
      continue;
    Descriptors found;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (std::int64_t i = 0; i < count; ++i) {
      found.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(found.back()->get());
    }
    std::int64_t got = 0;
    if (cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                 raw.data()) != CUDNN_STATUS_SUCCESS)
      continue;
    for (std::int64_t i = 0; i < got; ++i) configs.push_back(std::move(found[i]));
  }
  return configs;
}

void execute(cudnnHandle_t handle, const Plan& plan, void* x, void* w, void* y, float* sums,
             std::int64_t channels, const at::Tensor& like) {
  const at::Tensor workspace =
      at::empty({std::max<std::int64_t>(plan.workspace, 1)}, like.options().dtype(at::kByte));
  const std::vector<std::int64_t> uids{kX, kW, kY, kSum, kSquares};
  const std::vector<void*> pointers{x, w, y, sums, sums + channels};
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids);
  check(cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                 CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(pointers.size()),
                                 pointers.data()),
        "set data pointers");
  void* space = workspace.data_ptr();
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, space);
  pack.finalize("variant pack");
  check(cudnnBackendExecute(handle, plan.plan->get(), pack.get()), "execute");
}

// Milliseconds per run of `plan` on these operands (one untimed run, then the median of three).
float time_plan(cudnnHandle_t handle, const Plan& plan, const at::Tensor& x,
                const at::Tensor& weight, const at::Tensor& y, const at::Tensor& sums,
                cudaStream_t stream) {
  auto run = [&] {
    execute(handle, plan, x.data_ptr(), weight.data_ptr(), y.data_ptr(), sums.data_ptr<float>(),
            weight.size(0), x);
  };
  run();
  std::vector<float> times;
  for (int i = 0; i < 3; ++i) {
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
      throw Error("cuDNN graph (convolution + statistics): cannot create CUDA events");
    }
    cudaEventRecord(start, stream);
    run();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[1];
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;  // cannot tell: do not time
  }
  return status != cudaStreamCaptureStatusNone;
}

constexpr std::size_t kTimedPlans = 4;

// The plans by shape and handle: per thread, as ATen keeps its cuDNN handles and its
// convolutions' plan cache.
std::map<std::vector<std::int64_t>, std::shared_ptr<Plan>>& plan_cache() {
  thread_local std::map<std::vector<std::int64_t>, std::shared_ptr<Plan>> cache;
  return cache;
}

// The plan for these operands: built on the first call per shape and handle (null when no
// engine runs the graph), then looked up.
std::shared_ptr<Plan> plan_for(cudnnHandle_t handle, const at::Tensor& x, const at::Tensor& weight,
                               at::IntArrayRef stride, at::IntArrayRef padding,
                               at::IntArrayRef dilation) {
  auto& cache = plan_cache();
  std::vector<std::int64_t> key{reinterpret_cast<std::int64_t>(handle), x.device().index(),
                                static_cast<std::int64_t>(x.scalar_type())};
  for (const auto& part : {x.sizes(), weight.sizes(), stride, padding, dilation}) {
    key.insert(key.end(), part.begin(), part.end());
  }
  if (auto found = cache.find(key); found != cache.end()) return found->second;

  auto plan = std::make_shared<Plan>();
  plan->handle = handle;
  plan->output_sizes = output_sizes(x, weight, stride, padding, dilation);
  std::unique_ptr<Descriptor> graph =
      build_graph(handle, plan->keep, x, weight, stride, padding, dilation);
  Descriptors candidates;
  const bool benchmark =
      at::globalContext().benchmarkCuDNN() && !capturing(at::cuda::getCurrentCUDAStream());
  if (graph) {
    Descriptors configs = engine_configs(*graph, plan->keep);
    for (auto& config : configs) {
      auto candidate = std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      candidate->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *config);
      if (!candidate->try_finalize()) continue;
      plan->keep.push_back(std::move(config));
      candidates.push_back(std::move(candidate));
      if (!benchmark || candidates.size() == kTimedPlans) break;
    }
    plan->keep.push_back(std::move(graph));
  }
  if (candidates.empty()) {
    log::debug(log::cat("cuDNN has no engine for convolution + statistics on x ", x.sizes(),
                        ", weight ", weight.sizes(), ": the separate passes run"));
    cache[key] = nullptr;
    return nullptr;
  }
  auto workspace_of = [](const Descriptor& candidate) {
    std::int64_t size = 0;
    std::int64_t count = 0;
    check(cudnnBackendGetAttribute(candidate.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                   CUDNN_TYPE_INT64, 1, &count, &size),
          "workspace size");
    return size;
  };
  std::size_t best = 0;
  if (candidates.size() > 1) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const at::Tensor y =
        at::empty(plan->output_sizes, x.options().memory_format(at::MemoryFormat::ChannelsLast));
    const at::Tensor sums = at::empty({2, weight.size(0)}, x.options().dtype(at::kFloat));
    float fastest = std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      Plan trial;
      trial.plan = std::move(candidates[i]);
      trial.workspace = workspace_of(*trial.plan);
      const float ms = time_plan(handle, trial, x, weight, y, sums, stream);
      candidates[i] = std::move(trial.plan);
      if (ms < fastest) {
        fastest = ms;
        best = i;
      }
    }
  }
  plan->workspace = workspace_of(*candidates[best]);
  plan->plan = std::move(candidates[best]);
  cache[key] = plan;
  return plan;
}

cudnnHandle_t current_handle() {
  cudnnHandle_t handle = at::native::getCudnnHandle();
  check(cudnnSetStream(handle, at::cuda::getCurrentCUDAStream()), "set stream");
  return handle;
}

}  // namespace

void release_conv_statistics_plans() { plan_cache().clear(); }

const ConvStatisticsPlan* conv_statistics_plan(const at::Tensor& x, const at::Tensor& weight,
                                               at::IntArrayRef stride, at::IntArrayRef padding,
                                               at::IntArrayRef dilation) {
  const c10::cuda::CUDAGuard guard(x.device());
  return plan_for(current_handle(), x, weight, stride, padding, dilation).get();
}

std::pair<at::Tensor, at::Tensor> conv_with_statistics(const ConvStatisticsPlan& plan,
                                                       const at::Tensor& x,
                                                       const at::Tensor& weight,
                                                       const at::Tensor& sums_into) {
  const c10::cuda::CUDAGuard guard(x.device());
  check(cudnnSetStream(plan.handle, at::cuda::getCurrentCUDAStream()), "set stream");
  const std::int64_t channels = weight.size(0);
  at::Tensor y =
      at::empty(plan.output_sizes, x.options().memory_format(at::MemoryFormat::ChannelsLast));
  // GenStats overwrites its outputs (tests/torch/test_models_fusion.cpp checks it on a buffer full
  // of 1000s): no zeroing.
  at::Tensor sums = sums_into;
  if (!sums.defined()) sums = at::empty({2, channels}, x.options().dtype(at::kFloat));
  if (sums.scalar_type() != at::kFloat || !sums.is_contiguous() || sums.numel() != 2 * channels ||
      sums.device() != x.device()) {
    throw Error(
        "conv_with_statistics: sums_into must be a contiguous fp32 [2, K] tensor on x's "
        "device");
  }
  execute(plan.handle, plan, x.data_ptr(), weight.data_ptr(), y.data_ptr(), sums.data_ptr<float>(),
          channels, x);
  return {y, sums};
}

#else  // no cuDNN

void release_conv_statistics_plans() {}

const ConvStatisticsPlan* conv_statistics_plan(const at::Tensor& /*x*/,
                                               const at::Tensor& /*weight*/,
                                               at::IntArrayRef /*stride*/,
                                               at::IntArrayRef /*padding*/,
                                               at::IntArrayRef /*dilation*/) {
  return nullptr;
}

std::pair<at::Tensor, at::Tensor> conv_with_statistics(const ConvStatisticsPlan& /*plan*/,
                                                       const at::Tensor& /*x*/,
                                                       const at::Tensor& /*weight*/,
                                                       const at::Tensor& /*sums_into*/) {
  throw Error("conv_with_statistics: gpuperf was built without cuDNN");
}

#endif

}  // namespace gpuperf::detail
