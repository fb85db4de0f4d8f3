// What cuDNN's graph API (backend descriptors, runtime fusion) offers ResNet-50's training step on
// this GPU: for convolutions of ResNet-50 at batch 256 (fp16, NHWC), the time of
//   conv        the convolution alone (best of the engines the heuristics offer),
//   conv+stats  the convolution with BatchNorm's per-channel sum and sum of squares of its output
//               computed in its epilogue (GenStats),
//   sbr+conv+stats  the same with the previous BatchNorm's scale, bias and ReLU applied to the
//               input as it is loaded (the normalized activation is never written),
//   sbr+wgrad   the weight gradient with that prologue on its input,
// beside cuDNN's NHWC BatchNorm+ReLU forward (the kernel gpuperf's training runs today) on the
// convolution's output. A plan that no engine supports prints "unsupported" and the reason.
//
//   g++ -std=c++17 -O2 cudnn_fusion_probe.cpp -I<cuda>/include -I<cudnn>/include
//       -L<cuda>/lib64 -L<cudnn>/lib -lcudnn -lcudart -o probe && ./probe

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

void check(cudnnStatus_t status, const char* what, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[1024] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  throw std::runtime_error(std::string(what) + " (line " + std::to_string(line) +
                           "): " + cudnnGetErrorString(status) + " " + detail);
}
void check(cudaError_t status, const char* what, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(what) + " (line " + std::to_string(line) +
                           "): " + cudaGetErrorString(status));
}
#define CK(call) check((call), #call, __LINE__)

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) { CK(cudnnBackendCreateDescriptor(type, &d_)); }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  ~Desc() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  template <typename T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T& value) {
    CK(cudnnBackendSetAttribute(d_, name, type, 1, &value));
    return *this;
  }
  template <typename T>
  Desc& set_array(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                  const std::vector<T>& values) {
    CK(cudnnBackendSetAttribute(d_, name, type, static_cast<int64_t>(values.size()),
                                values.data()));
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    CK(cudnnBackendSetAttribute(d_, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o));
    return *this;
  }
  void finalize() { CK(cudnnBackendFinalize(d_)); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Dims = std::vector<int64_t>;  // N, C, H, W (logical order); memory is NHWC

std::unique_ptr<Desc> tensor(int64_t uid, const Dims& d, cudnnDataType_t type, bool is_virtual) {
  auto t = std::make_unique<Desc>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const Dims strides{d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type)
      .set_array(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, d)
      .set_array(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, int64_t{16})
      .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual);
  t->finalize();
  return t;
}

std::unique_ptr<Desc> pointwise_op(cudnnPointwiseMode_t mode, const Desc& x, const Desc* b,
                                   const Desc& y, std::vector<std::unique_ptr<Desc>>& keep) {
  auto pw = std::make_unique<Desc>(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw->set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
      .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
  pw->finalize();
  auto op = std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, *pw)
      .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
      .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  if (b != nullptr) op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  op->finalize();
  keep.push_back(std::move(pw));
  return op;
}

struct ConvShape {
  const char* name;
  int64_t n, c, h, w, k, r, stride, pad;
  int64_t p() const { return (h + 2 * pad - r) / stride + 1; }
  int64_t q() const { return (w + 2 * pad - r) / stride + 1; }
};

std::unique_ptr<Desc> conv_desc(const ConvShape& s) {
  auto c = std::make_unique<Desc>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  c->set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, int64_t{2})
      .set_array(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, Dims{s.pad, s.pad})
      .set_array(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, Dims{s.pad, s.pad})
      .set_array(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, Dims{s.stride, s.stride})
      .set_array(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, Dims{1, 1});
  c->finalize();
  return c;
}

// Unique ids of the graphs' tensors.
enum : int64_t { kX = 1, kW, kY, kSum, kSqSum, kScale, kBias, kDy, kDw, kT1 = 100, kT2, kT3 };

struct Graph {
  std::vector<std::unique_ptr<Desc>> keep;  // everything the ops point at
  std::vector<std::unique_ptr<Desc>> ops;
};

// sbr: the input passes through scale, bias and ReLU (virtual tensors) before the convolution.
std::unique_ptr<Desc> sbr_prologue(Graph& g, const Dims& xd, const Desc& x) {
  const Dims per_channel{1, xd[1], 1, 1};
  auto scale = tensor(kScale, per_channel, CUDNN_DATA_HALF, false);
  auto bias = tensor(kBias, per_channel, CUDNN_DATA_HALF, false);
  auto t1 = tensor(kT1, xd, CUDNN_DATA_FLOAT, true);
  auto t2 = tensor(kT2, xd, CUDNN_DATA_FLOAT, true);
  auto t3 = tensor(kT3, xd, CUDNN_DATA_HALF, true);
  g.ops.push_back(pointwise_op(CUDNN_POINTWISE_MUL, x, scale.get(), *t1, g.keep));
  g.ops.push_back(pointwise_op(CUDNN_POINTWISE_ADD, *t1, bias.get(), *t2, g.keep));
  g.ops.push_back(pointwise_op(CUDNN_POINTWISE_RELU_FWD, *t2, nullptr, *t3, g.keep));
  g.keep.push_back(std::move(scale));
  g.keep.push_back(std::move(bias));
  g.keep.push_back(std::move(t1));
  g.keep.push_back(std::move(t2));
  return t3;
}

enum class Kind { kConv, kConvStats, kSbrConvStats, kSbrWgrad };

Graph build(const ConvShape& s, Kind kind) {
  Graph g;
  const Dims xd{s.n, s.c, s.h, s.w};
  const Dims wd{s.k, s.c, s.r, s.r};
  const Dims yd{s.n, s.k, s.p(), s.q()};
  auto x = tensor(kX, xd, CUDNN_DATA_HALF, false);
  auto w = tensor(kind == Kind::kSbrWgrad ? kDw : kW, wd,
                  kind == Kind::kSbrWgrad ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF, false);
  auto y = tensor(kind == Kind::kSbrWgrad ? kDy : kY, yd, CUDNN_DATA_HALF, false);
  auto conv = conv_desc(s);
  const Desc* input = x.get();
  std::unique_ptr<Desc> activated;
  if (kind == Kind::kSbrConvStats || kind == Kind::kSbrWgrad) {
    activated = sbr_prologue(g, xd, *x);
    input = activated.get();
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  if (kind == Kind::kSbrWgrad) {
    auto op =
        std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
    op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, *input)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, *w)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, *y)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, *conv)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, alpha)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, beta);
    op->finalize();
    g.ops.push_back(std::move(op));
  } else {
    auto op = std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, *input)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, *w)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, *y)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, *conv)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, alpha)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, beta);
    op->finalize();
    g.ops.push_back(std::move(op));
  }
  if (kind == Kind::kConvStats || kind == Kind::kSbrConvStats) {
    const Dims per_channel{1, s.k, 1, 1};
    auto sum = tensor(kSum, per_channel, CUDNN_DATA_FLOAT, false);
    auto sqsum = tensor(kSqSum, per_channel, CUDNN_DATA_FLOAT, false);
    auto op = std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, CUDNN_GENSTATS_SUM_SQSUM)
        .set(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        .set_desc(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, *y)
        .set_desc(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, *sum)
        .set_desc(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, *sqsum);
    op->finalize();
    g.ops.push_back(std::move(op));
    g.keep.push_back(std::move(sum));
    g.keep.push_back(std::move(sqsum));
  }
  g.keep.push_back(std::move(x));
  g.keep.push_back(std::move(w));
  g.keep.push_back(std::move(y));
  g.keep.push_back(std::move(conv));
  if (activated) g.keep.push_back(std::move(activated));
  return g;
}

struct Buffers {
  void* x;
  void* w;
  void* y;
  void* sum;
  void* sqsum;
  void* scale;
  void* bias;
};

float time_ms(cudaStream_t stream, const std::function<void()>& run, int iterations = 20) {
  for (int i = 0; i < 3; ++i) run();
  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  CK(cudaEventRecord(start, stream));
  for (int i = 0; i < iterations; ++i) run();
  CK(cudaEventRecord(stop, stream));
  CK(cudaEventSynchronize(stop));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / iterations;
}

// Every engine configuration the heuristics offer (modes A and fallback), each made a plan where it
// can be; the fastest plan's time, or a reason.
std::string best_plan(cudnnHandle_t handle, cudaStream_t stream, Graph& g, const Buffers& b,
                      Kind kind) {
  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> ops;
  for (auto& op : g.ops) ops.push_back(op->get());
  graph.set_array(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle);
  graph.finalize();
  std::vector<int64_t> uids;
  std::vector<void*> ptrs;
  if (kind == Kind::kSbrWgrad) {
    uids = {kX, kDw, kDy, kScale, kBias};
    ptrs = {b.x, b.w, b.y, b.scale, b.bias};
  } else {
    uids = {kX, kW, kY};
    ptrs = {b.x, b.w, b.y};
    if (kind != Kind::kConv) {
      uids.insert(uids.end(), {kSum, kSqSum});
      ptrs.insert(ptrs.end(), {b.sum, b.sqsum});
    }
    if (kind == Kind::kSbrConvStats) {
      uids.insert(uids.end(), {kScale, kBias});
      ptrs.insert(ptrs.end(), {b.scale, b.bias});
    }
  }
  std::string reasons;
  float best = 1e30f;
  int64_t best_engine = -1;
  int tried = 0;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
    try {
      heur.finalize();
    } catch (const std::exception& e) {
      reasons += std::string(" heuristics: ") + e.what();
      continue;
    }
    int64_t count = 0;
    CK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
    std::vector<std::unique_ptr<Desc>> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(configs.back()->get());
    }
    int64_t got = 0;
    if (count > 0) {
      CK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()));
    }
    for (int64_t i = 0; i < got && tried < 8; ++i) {
      Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle)
          .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *configs[i]);
      try {
        plan.finalize();
      } catch (const std::exception& e) {
        if (reasons.size() < 400) reasons += std::string(" plan: ") + e.what();
        continue;
      }
      ++tried;
      int64_t workspace_size = 0;
      CK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                  CUDNN_TYPE_INT64, 1, nullptr, &workspace_size));
      void* workspace = nullptr;
      if (workspace_size > 0) CK(cudaMalloc(&workspace, workspace_size));
      Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
      pack.set_array(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids)
          .set_array(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs)
          .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace);
      pack.finalize();
      try {
        const float ms =
            time_ms(stream, [&] { CK(cudnnBackendExecute(handle, plan.get(), pack.get())); });
        int64_t engine_index = -1;
        Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        cudnnBackendDescriptor_t e = engine.get();
        int64_t n = 0;
        if (cudnnBackendGetAttribute(configs[i]->get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                     &e) == CUDNN_STATUS_SUCCESS) {
          cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                   &engine_index);
        }
        if (ms < best) {
          best = ms;
          best_engine = engine_index;
        }
      } catch (const std::exception& e) {
        if (reasons.size() < 400) reasons += std::string(" run: ") + e.what();
      }
      if (workspace != nullptr) cudaFree(workspace);
    }
  }
  char line[256];
  if (best_engine < 0 && best > 1e29f) return "unsupported (" + reasons.substr(0, 300) + ")";
  std::snprintf(line, sizeof(line), "%8.1f us (engine %lld, %d plans timed)", best * 1e3f,
                static_cast<long long>(best_engine), tried);
  return line;
}

// cuDNN's NHWC BatchNorm + ReLU training forward on [n, k, p, q], as gpuperf runs it.
std::string batch_norm_relu(cudnnHandle_t handle, cudaStream_t stream, const ConvShape& s,
                            const Buffers& b, void* out, void* params) {
  cudnnTensorDescriptor_t data, per_channel;
  CK(cudnnCreateTensorDescriptor(&data));
  CK(cudnnCreateTensorDescriptor(&per_channel));
  CK(cudnnSetTensor4dDescriptor(data, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, static_cast<int>(s.n),
                                static_cast<int>(s.k), static_cast<int>(s.p()),
                                static_cast<int>(s.q())));
  CK(cudnnSetTensor4dDescriptor(per_channel, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
                                static_cast<int>(s.k), 1, 1));
  cudnnActivationDescriptor_t relu;
  CK(cudnnCreateActivationDescriptor(&relu));
  CK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
  const auto mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
  const auto ops = CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
  size_t workspace_size = 0, reserve_size = 0;
  CK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
      handle, mode, ops, data, nullptr, data, per_channel, relu, &workspace_size));
  CK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, ops, relu, data,
                                                          &reserve_size));
  void *workspace = nullptr, *reserve = nullptr;
  CK(cudaMalloc(&workspace, std::max<size_t>(workspace_size, 16)));
  CK(cudaMalloc(&reserve, std::max<size_t>(reserve_size, 16)));
  float* p = static_cast<float*>(params);
  const float one = 1, zero = 0;
  const float ms = time_ms(stream, [&] {
    CK(cudnnBatchNormalizationForwardTrainingEx(
        handle, mode, ops, &one, &zero, data, b.y, nullptr, nullptr, data, out, per_channel, p,
        p + s.k, 0.1, p + 2 * s.k, p + 3 * s.k, 1e-5, p + 4 * s.k, p + 5 * s.k, relu, workspace,
        workspace_size, reserve, reserve_size));
  });
  cudaFree(workspace);
  cudaFree(reserve);
  cudnnDestroyActivationDescriptor(relu);
  cudnnDestroyTensorDescriptor(data);
  cudnnDestroyTensorDescriptor(per_channel);
  char line[64];
  std::snprintf(line, sizeof(line), "%8.1f us", ms * 1e3f);
  return line;
}

}  // namespace

int main() {
  try {
    cudnnHandle_t handle;
    CK(cudnnCreate(&handle));
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    CK(cudnnSetStream(handle, stream));
    std::printf("cuDNN %zu\n", cudnnGetVersion());
    const std::vector<ConvShape> shapes{
        {"layer1 conv2 3x3 64->64 56x56", 256, 64, 56, 56, 64, 3, 1, 1},
        {"layer1 conv3 1x1 64->256 56x56", 256, 64, 56, 56, 256, 1, 1, 0},
        {"layer2 conv1 1x1 512->128 28x28", 256, 512, 28, 28, 128, 1, 1, 0},
        {"layer3 conv2 3x3 256->256 14x14", 256, 256, 14, 14, 256, 3, 1, 1},
    };
    for (const auto& s : shapes) {
      Buffers b{};
      const size_t x_bytes = s.n * s.c * s.h * s.w * 2;
      const size_t y_bytes = s.n * s.k * s.p() * s.q() * 2;
      const size_t w_bytes = s.k * s.c * s.r * s.r * 4;  // fp32 for the weight gradient
      void *out = nullptr, *params = nullptr;
      CK(cudaMalloc(&b.x, x_bytes));
      CK(cudaMalloc(&b.y, y_bytes));
      CK(cudaMalloc(&out, y_bytes));
      CK(cudaMalloc(&b.w, w_bytes));
      CK(cudaMalloc(&b.sum, s.k * 4));
      CK(cudaMalloc(&b.sqsum, s.k * 4));
      CK(cudaMalloc(&b.scale, s.c * 2));
      CK(cudaMalloc(&b.bias, s.c * 2));
      CK(cudaMalloc(&params, 6 * s.k * 4));
      CK(cudaMemset(b.x, 0, x_bytes));
      CK(cudaMemset(b.y, 0, y_bytes));
      CK(cudaMemset(b.w, 0, w_bytes));
      CK(cudaMemset(b.scale, 0, s.c * 2));
      CK(cudaMemset(b.bias, 0, s.c * 2));
      CK(cudaMemset(params, 0, 6 * s.k * 4));
      std::printf("%s\n", s.name);
      for (auto [kind, label] :
           {std::pair{Kind::kConv, "conv"}, std::pair{Kind::kConvStats, "conv+stats"},
            std::pair{Kind::kSbrConvStats, "sbr+conv+stats"},
            std::pair{Kind::kSbrWgrad, "sbr+wgrad"}}) {
        std::string result;
        try {
          Graph g = build(s, kind);
          result = best_plan(handle, stream, g, b, kind);
        } catch (const std::exception& e) {
          result = std::string("unsupported (") + e.what() + ")";
        }
        std::printf("  %-16s %s\n", label, result.c_str());
      }
      std::printf("  %-16s %s\n", "bn+relu fwd",
                  batch_norm_relu(handle, stream, s, b, out, params).c_str());
      for (void* p : {b.x, b.y, out, b.w, b.sum, b.sqsum, b.scale, b.bias, params}) cudaFree(p);
    }
    cudnnDestroy(handle);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudnn_fusion_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
