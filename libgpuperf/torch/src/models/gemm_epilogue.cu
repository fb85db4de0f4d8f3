// linear_gelu() (gemm_epilogue.h): one cublasLtMatmul with the GELU_AUX_BIAS epilogue. cuBLASLt
// is reached through the copy LibTorch loaded (dlopen with RTLD_NOLOAD first): linking the
// toolkit's own copy would put a second cuBLAS of the same soname in front of LibTorch's.

#include <cublasLt.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

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

// The heuristic's algorithm per shape, dtype, device and operand alignments: asked once, where
// an eager step would ask at every call (a captured graph replays without asking).
using AlgoKey = std::tuple<int, int, std::int64_t, int, int, std::uint32_t, std::uint32_t,
                           std::uint32_t, std::uint32_t>;

std::mutex& algo_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<AlgoKey, cublasLtMatmulAlgo_t>& algo_cache() {
  static std::map<AlgoKey, cublasLtMatmulAlgo_t> cache;
  return cache;
}

}  // namespace

GemmOutcome linear_gelu(NhwcDtype dtype, const void* x, const void* w, const void* b,
                        std::int64_t rows, int in, int out, void* y, void* pre, void* workspace,
                        cudaStream_t stream, int* status) {
  *status = CUBLAS_STATUS_SUCCESS;
  if (dtype == NhwcDtype::kFloat || rows <= 0 || in % 8 != 0 || out % 8 != 0 || !lt().complete()) {
    return GemmOutcome::kUnsupported;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return GemmOutcome::kUnsupported;
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  const auto failed = [&](cublasStatus_t code) {
    *status = static_cast<int>(code);
    return code != CUBLAS_STATUS_SUCCESS;
  };
  const cublasLtHandle_t handle = handle_for(device, &s);
  if (failed(s)) return GemmOutcome::kFailed;
  const cudaDataType_t type = dtype == NhwcDtype::kHalf ? CUDA_R_16F : CUDA_R_16BF;
  // Column-major terms: D [out x rows] = W [out x in] (w row-major, read transposed) times
  // X [in x rows] (x row-major); the bias runs along D's rows, the GELU input is D's shape.
  Descriptors desc;
  if (failed(lt().desc_create(&desc.op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_AUX_BIAS)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, b)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, pre)) ||
      failed(set(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(out))) ||
      failed(lt().layout_create(&desc.a, type, in, out, in)) ||
      failed(lt().layout_create(&desc.b, type, in, static_cast<std::uint64_t>(rows), in)) ||
      failed(lt().layout_create(&desc.d, type, out, static_cast<std::uint64_t>(rows), out))) {
    return GemmOutcome::kFailed;
  }
  const std::size_t workspace_bytes = kGemmWorkspaceBytes;
  const std::uint32_t align_w = alignment_of(w);
  const std::uint32_t align_x = alignment_of(x);
  const std::uint32_t align_y = alignment_of(y);
  const std::uint32_t align_pre = alignment_of(pre);
  const AlgoKey key{device,   static_cast<int>(dtype), rows, in, out, align_w, align_x, align_y,
                    align_pre};
  cublasLtMatmulAlgo_t algo{};
  bool known = false;
  {
    const std::lock_guard<std::mutex> lock(algo_mutex());
    const auto hit = algo_cache().find(key);
    if (hit != algo_cache().end()) {
      algo = hit->second;
      known = true;
    }
  }
  if (!known) {
    if (failed(lt().preference_create(&desc.preference)) ||
        failed(
            prefer(desc.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace_bytes)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_w)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_x)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_y)) ||
        failed(prefer(desc.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                      std::min(align_y, align_pre)))) {
      return GemmOutcome::kFailed;
    }
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    s = lt().heuristic(handle, desc.op, desc.a, desc.b, desc.d, desc.d, desc.preference, 1,
                       &heuristic, &found);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0) {
      *status = static_cast<int>(s);
      return GemmOutcome::kUnsupported;
    }
    algo = heuristic.algo;
    const std::lock_guard<std::mutex> lock(algo_mutex());
    algo_cache().emplace(key, algo);
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  if (failed(lt().matmul(handle, desc.op, &alpha, w, desc.a, x, desc.b, &beta, y, desc.d, y, desc.d,
                         &algo, workspace, workspace_bytes, stream))) {
    return GemmOutcome::kFailed;
  }
  return GemmOutcome::kDone;
}

}  // namespace gpuperf::detail
