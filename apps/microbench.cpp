// The seeds' comparison table, measured on the card in hand: GEMM throughput for fp64, fp32,
// tf32, fp16, bf16, int8 and fp8 (where the GPU and LibTorch have them) and memory bandwidth
// (device copy/read/write, pinned and pageable host<->device), each beside its datasheet figure.
// On a machine without a GPU it runs the CPU variant and says so. `microbench --help` lists the
// options.
#include "micro_program.h"

int main(int argc, char** argv) { return gpuperf::program::run_micro_program(argc, argv); }
