// linear_gelu() (gemm_epilogue.h): one cublasLtMatmul with the GELU_AUX_BIAS epilogue; matmul():
// one without an epilogue; each product's algorithm timed at its first call. cuBLASLt is
// reached through the copy LibTorch loaded (dlopen with RTLD_NOLOAD first): linking the toolkit's
// own copy would put a second cuBLAS of the same soname in front of LibTorch's.

#include <cublasLt.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "models/gemm_epilogue.h"

namespace gpuperf::detail {
namespace {

// The cuBLASLt functions used here, from the loaded library; all null where it is missing.
struct LtApi {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;

  [[nodiscard]] bool complete() const {
    return create && desc_create && desc_destroy && desc_set && layout_create && layout_destroy &&
           preference_create && preference_destroy && preference_set && heuristic && matmul;
  }
};

template <typename F>
void resolve(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
}

const LtApi& lt() {
  static const LtApi api = [] {
    LtApi a;
    const std::string name = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) library = dlopen(name.c_str(), RTLD_NOW);
    if (library == nullptr) return a;
    resolve(library, "cublasLtCreate", a.create);
    resolve(library, "cublasLtMatmulDescCreate", a.desc_create);
    resolve(library, "cublasLtMatmulDescDestroy", a.desc_destroy);
    resolve(library, "cublasLtMatmulDescSetAttribute", a.desc_set);
    resolve(library, "cublasLtMatrixLayoutCreate", a.layout_create);
    resolve(library, "cublasLtMatrixLayoutDestroy", a.layout_destroy);
    resolve(library, "cublasLtMatmulPreferenceCreate", a.preference_create);
    resolve(library, "cublasLtMatmulPreferenceDestroy", a.preference_destroy);
    resolve(library, "cublasLtMatmulPreferenceSetAttribute", a.preference_set);
    resolve(library, "cublasLtMatmulAlgoGetHeuristic", a.heuristic);
    resolve(library, "cublasLtMatmul", a.matmul);
    return a;
  }();
  return api;
}

// One cuBLASLt handle per device, made at its first use and kept for the process.
cublasLtHandle_t handle_for(int device, cublasStatus_t* status) {
  static std::mutex mutex;
  static std::array<cublasLtHandle_t, 64> handles{};
  const std::lock_guard<std::mutex> lock(mutex);
  if (device < 0 || device >= static_cast<int>(handles.size())) {
    *status = CUBLAS_STATUS_INVALID_VALUE;
    return nullptr;
  }
  cublasLtHandle_t& handle = handles[static_cast<std::size_t>(device)];
  *status = handle == nullptr ? lt().create(&handle) : CUBLAS_STATUS_SUCCESS;
  return *status == CUBLAS_STATUS_SUCCESS ? handle : nullptr;
}

// The descriptors of one call, destroyed with it.
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr;
  cublasLtMatrixLayout_t b = nullptr;
  cublasLtMatrixLayout_t d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    if (preference != nullptr) lt().preference_destroy(preference);
    if (d != nullptr) lt().layout_destroy(d);
    if (b != nullptr) lt().layout_destroy(b);
    if (a != nullptr) lt().layout_destroy(a);
    if (op != nullptr) lt().desc_destroy(op);
  }
};

template <typename T>
cublasStatus_t set(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attribute,
                   const T& value) {
  return lt().desc_set(op, attribute, &value, sizeof(value));
}

template <typename T>
cublasStatus_t prefer(cublasLtMatmulPreference_t preference,
                      cublasLtMatmulPreferenceAttributes_t attribute, const T& value) {
  return lt().preference_set(preference, attribute, &value, sizeof(value));
}

// The largest power of two up to 256 that divides `p`'s address: cuBLASLt's heuristic assumes
// 256-byte operands unless told (an algorithm it picks may then need them), so each call says.
std::uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t alignment = 256;
  while (address % alignment != 0) alignment /= 2;
  return alignment;
}

// One matrix product of cuBLASLt, column-major: D [m x n] = op(A) op(B), k the shared dimension,
// with an epilogue. Every operand is described by its type, stored rows and columns and leading
// dimension.
struct Matrix {
  cudaDataType_t type = CUDA_R_16BF;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::int64_t ld = 0;
  const void* data = nullptr;
};

struct LtProduct {
  cublasOperation_t trans_a = CUBLAS_OP_N;
  cublasOperation_t trans_b = CUBLAS_OP_N;
  Matrix a, b, d;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;  // of D's type
  void* aux = nullptr;         // GELU_AUX: the GELU's input, D's shape
  std::int64_t aux_ld = 0;
};

// The algorithm per product (operations, types, shapes, epilogue, device, operand alignments and
// whether timed), or none where the heuristic had none: chosen once, where an eager step would
// ask at every call (a captured graph replays without asking).
using AlgoKey = std::array<std::int64_t, 16>;

std::mutex& algo_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<AlgoKey, std::optional<cublasLtMatmulAlgo_t>>& algo_cache() {
  static std::map<AlgoKey, std::optional<cublasLtMatmulAlgo_t>> cache;
  return cache;
}

// Whether work queued on `stream` now would be captured into a graph, not run (or the stream
// cannot say): nothing may wait for it then.
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return capture != cudaStreamCaptureStatusNone;
}

// Which of the heuristic's `count` candidates a product runs (matmul()'s rule): each timed by
// `call` on `stream` (not capturing); 0, the heuristic's first, where timing fails or none is
// clearly faster.
int fastest(const std::function<cublasStatus_t(const cublasLtMatmulAlgo_t&)>& call,
            const cublasLtMatmulHeuristicResult_t* candidates, int count, cudaStream_t stream) {
  if (count < 2) return 0;
  std::array<cudaEvent_t, 2> events{};
  if (cudaEventCreate(&events[0]) != cudaSuccess || cudaEventCreate(&events[1]) != cudaSuccess) {
    (void)cudaGetLastError();
    for (cudaEvent_t e : events) {
      if (e != nullptr) (void)cudaEventDestroy(e);
    }
    return 0;
  }
  std::vector<std::vector<float>> times(static_cast<std::size_t>(count));
  std::vector<char> runs(static_cast<std::size_t>(count), 1);  // every call so far succeeded
  for (int i = 0; i < count; ++i) {
    for (int warm = 0; warm < 2 && runs[i]; ++warm) {
      runs[i] = call(candidates[i].algo) == CUBLAS_STATUS_SUCCESS;
    }
  }
  bool timed = runs[0];
  for (int round = 0; round < kTimingRounds && timed; ++round) {
    for (int i = 0; i < count && timed; ++i) {
      if (!runs[i]) continue;
      timed = cudaEventRecord(events[0], stream) == cudaSuccess;
      for (int c = 0; c < kTimingCalls && timed && runs[i]; ++c) {
        runs[i] = call(candidates[i].algo) == CUBLAS_STATUS_SUCCESS;
      }
      float ms = 0;
      timed = timed && cudaEventRecord(events[1], stream) == cudaSuccess &&
              cudaEventSynchronize(events[1]) == cudaSuccess &&
              cudaEventElapsedTime(&ms, events[0], events[1]) == cudaSuccess;
      if (runs[i]) times[static_cast<std::size_t>(i)].push_back(ms);
    }
  }
  for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
  if (!timed || !runs[0]) {
    (void)cudaGetLastError();
    return 0;
  }
  const auto median = [](std::vector<float> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  int best = 0;
  float best_time = median(times[0]);
  const float bar = static_cast<float>(1 - kTimingMargin) * best_time;
  for (int i = 1; i < count; ++i) {
    if (!runs[i] || times[static_cast<std::size_t>(i)].size() != kTimingRounds) continue;
    const float t = median(times[static_cast<std::size_t>(i)]);
    if (t < bar && t < best_time) {
      best = i;
      best_time = t;
    }
  }
  return best;
}

GemmOutcome run(const LtProduct& p, bool timed, void* workspace, cudaStream_t stream, int* status) {
  *status = CUBLAS_STATUS_SUCCESS;
  if (!lt().complete()) return GemmOutcome::kUnsupported;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return GemmOutcome::kUnsupported;
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  const auto failed = [&](cublasStatus_t code) {
    *status = static_cast<int>(code);
    return code != CUBLAS_STATUS_SUCCESS;
  };
  const cublasLtHandle_t handle = handle_for(device, &s);
  if (failed(s)) return GemmOutcome::kFailed;
  Descriptors desc;
  if (failed(lt().desc_create(&desc.op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_TRANSA, p.trans_a)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_TRANSB, p.trans_b)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE, p.epilogue)) ||
      (p.bias != nullptr && failed(set(desc.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias))) ||
      (p.aux != nullptr &&
       (failed(set(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, p.aux)) ||
        failed(set(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, p.aux_ld)))) ||
      failed(lt().layout_create(&desc.a, p.a.type, p.a.rows, p.a.cols, p.a.ld)) ||
      failed(lt().layout_create(&desc.b, p.b.type, p.b.rows, p.b.cols, p.b.ld)) ||
      failed(lt().layout_create(&desc.d, p.d.type, p.d.rows, p.d.cols, p.d.ld))) {
    return GemmOutcome::kFailed;
  }
  const std::size_t workspace_bytes = kGemmWorkspaceBytes;
  const std::uint32_t align_a = alignment_of(p.a.data);
  const std::uint32_t align_b = alignment_of(p.b.data);
  const std::uint32_t align_d = alignment_of(p.d.data);
  const std::uint32_t align_aux = p.aux != nullptr ? alignment_of(p.aux) : 256;
  const AlgoKey key{device,
                    p.trans_a,
                    p.trans_b,
                    p.a.type,
                    p.b.type,
                    p.d.type,
                    static_cast<std::int64_t>(p.a.rows),
                    static_cast<std::int64_t>(p.a.cols),
                    static_cast<std::int64_t>(p.b.rows),
                    static_cast<std::int64_t>(p.b.cols),
                    p.epilogue,
                    align_a,
                    align_b,
                    align_d,
                    align_aux,
                    timed ? 1 : 0};
  // D = A B with `candidate` (also each candidate timed, each writing D).
  const float one = 1.0f;
  const float zero = 0.0f;
  void* d = const_cast<void*>(p.d.data);
  const auto call = [&](const cublasLtMatmulAlgo_t& candidate) {
    return lt().matmul(handle, desc.op, &one, p.a.data, desc.a, p.b.data, desc.b, &zero, d, desc.d,
                       d, desc.d, &candidate, workspace, workspace_bytes, stream);
  };
  cublasLtMatmulAlgo_t algo{};
  bool known = false;
  {
    const std::lock_guard<std::mutex> lock(algo_mutex());
    const auto hit = algo_cache().find(key);
    if (hit != algo_cache().end()) {
      if (!hit->second) return GemmOutcome::kUnsupported;
      algo = *hit->second;
      known = true;
    }
  }
  if (!known) {
    if (failed(lt().preference_create(&desc.preference)) ||
        failed(
            prefer(desc.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace_bytes)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_d)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                      std::min(align_d, align_aux)))) {
      return GemmOutcome::kFailed;
    }
    std::array<cublasLtMatmulHeuristicResult_t, kTimedAlgorithms> candidates{};
    int found = 0;
    s = lt().heuristic(handle, desc.op, desc.a, desc.b, desc.d, desc.d, desc.preference,
                       timed ? kTimedAlgorithms : 1, candidates.data(), &found);
    const bool none = s != CUBLAS_STATUS_SUCCESS || found == 0;
    if (none) {
      const std::lock_guard<std::mutex> lock(algo_mutex());
      algo_cache().emplace(key, std::nullopt);
      *status = static_cast<int>(s);
      return GemmOutcome::kUnsupported;
    }
    // Nothing is timed or kept during a capture: the heuristic's first runs there, and the
    // product's first call outside a capture chooses.
    if (timed && capturing(stream)) {
      algo = candidates[0].algo;
    } else {
      algo = candidates[static_cast<std::size_t>(fastest(call, candidates.data(), found, stream))]
                 .algo;
      const std::lock_guard<std::mutex> lock(algo_mutex());
      algo_cache().emplace(key, algo);
    }
  }
  if (failed(call(algo))) return GemmOutcome::kFailed;
  return GemmOutcome::kDone;
}

}  // namespace

GemmOutcome matmul(bool timed, NhwcDtype dtype, bool float_out, bool trans_a, bool trans_b,
                   std::int64_t m, std::int64_t n, std::int64_t k, const void* a, std::int64_t lda,
                   const void* b, std::int64_t ldb, void* d, std::int64_t ldd, void* workspace,
                   cudaStream_t stream, int* status) {
  *status = CUBLAS_STATUS_SUCCESS;
  if (dtype == NhwcDtype::kFloat || m <= 0 || n <= 0 || k <= 0) return GemmOutcome::kUnsupported;
  const cudaDataType_t type = dtype == NhwcDtype::kHalf ? CUDA_R_16F : CUDA_R_16BF;
  // A stored operand's rows or columns: `stored_transposed` where it is read transposed.
  const auto pick = [](bool transposed, std::int64_t stored_transposed, std::int64_t stored) {
    return static_cast<std::uint64_t>(transposed ? stored_transposed : stored);
  };
  LtProduct p;
  p.trans_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  p.trans_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  p.a = {type, pick(trans_a, k, m), pick(trans_a, m, k), lda, a};
  p.b = {type, pick(trans_b, n, k), pick(trans_b, k, n), ldb, b};
  p.d = {float_out ? CUDA_R_32F : type, static_cast<std::uint64_t>(m),
         static_cast<std::uint64_t>(n), ldd, d};
  return run(p, timed, workspace, stream, status);
}

GemmOutcome linear_gelu(bool timed, NhwcDtype dtype, const void* x, const void* w, const void* b,
                        std::int64_t rows, int in, int out, void* y, void* pre, void* workspace,
                        cudaStream_t stream, int* status) {
  *status = CUBLAS_STATUS_SUCCESS;
  if (dtype == NhwcDtype::kFloat || rows <= 0 || in % 8 != 0 || out % 8 != 0) {
    return GemmOutcome::kUnsupported;
  }
  const cudaDataType_t type = dtype == NhwcDtype::kHalf ? CUDA_R_16F : CUDA_R_16BF;
  const auto n = static_cast<std::uint64_t>(rows);
  // Column-major terms: D [out x rows] = W [out x in] (w row-major, read transposed) times
  // X [in x rows] (x row-major); the bias runs along D's rows, the GELU input is D's shape.
  LtProduct p;
  p.trans_a = CUBLAS_OP_T;
  p.trans_b = CUBLAS_OP_N;
  p.a = {type, static_cast<std::uint64_t>(in), static_cast<std::uint64_t>(out), in, w};
  p.b = {type, static_cast<std::uint64_t>(in), n, in, x};
  p.d = {type, static_cast<std::uint64_t>(out), n, out, y};
  p.epilogue = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  p.bias = b;
  p.aux = pre;
  p.aux_ld = out;
  return run(p, timed, workspace, stream, status);
}

}  // namespace gpuperf::detail
