// Exploratory (not part of the build): Llama 1B's GEMM shapes (4 x 2048 tokens, bf16, fp32
// accumulation), cublasGemmEx (what ATen's at::mm calls) against every algorithm cuBLASLt's
// heuristic offers, each timed in steady state at the card's power limit, alternating rounds.
// nvcc -O2 -std=c++17 tmp-gemm.cu -lcublasLt -lcublas -o /tmp/gemm && /tmp/gemm
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                   \
  do {                                                                          \
    auto e = (x);                                                               \
    if (e != 0) {                                                               \
      std::printf("error %d at %s:%d\n", static_cast<int>(e), __FILE__, __LINE__); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

struct Shape {
  const char* name;
  char ta, tb;  // column-major ops
  int m, n, k;
  bool fp32_out;
  int per_step;  // how many times a step runs it
};

// Values like a trained layer's (random signs and magnitudes): a GEMM's power depends on them.
__global__ void fill(__nv_bfloat16* x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ (seed * 0x9e3779b9u);
    h ^= h >> 15; h *= 0x85ebca6bu; h ^= h >> 13;
    x[i] = __float2bfloat16((float(h & 0xffff) / 65536.0f - 0.5f) * 0.1f);
  }
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const int M = 8192;
  // Row-major linear y = x W^T (x [M,K], W [N,K]) is column-major C[N,M] = W^T(T) x(N): "TN".
  // dgrad dx = g W: C[K,M] = W[K,N](N) g[N,M](N): "NN". wgrad dW = g^T x: C[K,N] = x[K,M](N) g^T: "NT".
  std::vector<Shape> shapes = {
      {"qkv fwd", 'T', 'N', 3072, M, 2048, false, 16},   {"qkv dgrad", 'N', 'N', 2048, M, 3072, false, 16},
      {"qkv wgrad", 'N', 'T', 2048, 3072, M, true, 16},  {"o fwd", 'T', 'N', 2048, M, 2048, false, 16},
      {"o dgrad", 'N', 'N', 2048, M, 2048, false, 16},   {"o wgrad", 'N', 'T', 2048, 2048, M, true, 16},
      {"w13 fwd", 'T', 'N', 16384, M, 2048, false, 16},  {"w13 dgrad", 'N', 'N', 2048, M, 16384, false, 16},
      {"w13 wgrad", 'N', 'T', 2048, 16384, M, true, 16}, {"w2 fwd", 'T', 'N', 2048, M, 8192, false, 16},
      {"w2 dgrad", 'N', 'N', 8192, M, 2048, false, 16},  {"w2 wgrad", 'N', 'T', 8192, 2048, M, true, 16},
      {"out fwd", 'T', 'N', 128256, M, 2048, false, 1},  {"out dgrad", 'N', 'N', 2048, M, 128256, false, 1},
      {"out wgrad", 'N', 'T', 2048, 128256, M, true, 1},
  };
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  CK(cublasCreate(&blas));
  CK(cublasLtCreate(&lt));
  const size_t ws_bytes = 32u << 20;
  void* ws;
  CK(cudaMalloc(&ws, ws_bytes));
  CK(cublasSetWorkspace(blas, ws, ws_bytes));
  size_t ab_elems = 0, c_elems = 0;
  for (auto& s : shapes) {
    ab_elems = std::max({ab_elems, size_t(s.m) * s.k, size_t(s.k) * s.n});
    c_elems = std::max(c_elems, size_t(s.m) * s.n);
  }
  void *a, *b, *c;
  CK(cudaMalloc(&a, ab_elems * 2));
  CK(cudaMalloc(&b, ab_elems * 2));
  CK(cudaMalloc(&c, c_elems * 4));
  fill<<<4096, 256>>>(static_cast<__nv_bfloat16*>(a), ab_elems, 1);
  fill<<<4096, 256>>>(static_cast<__nv_bfloat16*>(b), ab_elems, 2);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const float one = 1, zero = 0;
  double total_default = 0, total_best = 0, total_lt0 = 0;
  for (auto& s : shapes) {
    const cublasOperation_t opa = s.ta == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opb = s.tb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = s.ta == 'T' ? s.k : s.m;
    const int ldb = s.tb == 'T' ? s.n : s.k;
    const cudaDataType_t ctype = s.fp32_out ? CUDA_R_32F : CUDA_R_16BF;
    cublasLtMatmulDesc_t desc;
    CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, s.ta == 'T' ? s.k : s.m, s.ta == 'T' ? s.m : s.k, lda));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, s.tb == 'T' ? s.n : s.k, s.tb == 'T' ? s.k : s.n, ldb));
    CK(cublasLtMatrixLayoutCreate(&lc, ctype, s.m, s.n, s.m));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                            sizeof(ws_bytes)));
    cublasLtMatmulHeuristicResult_t res[16];
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 16, res, &found));
    // candidate -1: cublasGemmEx; 0..found-1: cuBLASLt's algorithms in the heuristic's order
    auto run = [&](int cand) {
      if (cand < 0) {
        CK(cublasGemmEx(blas, opa, opb, s.m, s.n, s.k, &one, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb,
                        &zero, c, ctype, s.m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      } else {
        CK(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, c, lc, c, lc, &res[cand].algo, ws,
                          ws_bytes, 0));
      }
    };
    std::vector<std::vector<float>> times(found + 1);
    for (int r = 0; r < rounds; ++r) {
      for (int cand = -1; cand < found; ++cand) {
        for (int i = 0; i < 3; ++i) run(cand);
        CK(cudaEventRecord(e0));
        for (int i = 0; i < reps; ++i) run(cand);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        times[cand + 1].push_back(ms / reps);
      }
    }
    std::vector<float> med(found + 1);
    for (int i = 0; i <= found; ++i) {
      auto t = times[i];
      std::sort(t.begin(), t.end());
      med[i] = t[t.size() / 2];
    }
    int best = 1;
    for (int i = 1; i <= found; ++i) if (med[i] < med[best]) best = i;
    const double flop = 2.0 * s.m * s.n * s.k;
    std::printf("%-10s m %6d n %6d k %6d  GemmEx %.3f ms (%.0f TF/s)  Lt#0 %.3f  best Lt#%d %.3f ms (%.0f TF/s)  gain %.2f%%  [%d algos]\n",
                s.name, s.m, s.n, s.k, med[0], flop / med[0] / 1e9, med[1], best - 1, med[best],
                flop / med[best] / 1e9, 100 * (med[0] / med[best] - 1), found);
    total_default += s.per_step * med[0];
    total_lt0 += s.per_step * med[1];
    total_best += s.per_step * std::min(med[best], med[0]);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
  }
  std::printf("a step's GEMMs: GemmEx %.2f ms, Lt#0 %.2f ms, best of each %.2f ms (%.2f%% less)\n", total_default,
              total_lt0, total_best, 100 * (1 - total_best / total_default));
  return 0;
}
