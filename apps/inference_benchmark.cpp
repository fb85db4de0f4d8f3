// Inference latency and throughput of any registered model: a batch-size sweep with per-call
// device timing (p50/p90/p95/p99/max per batch size, batch-1 latency and best throughput), and
// with --serve-rates a serving sweep (Poisson arrivals, dynamic batching, one FIFO server),
// simulated from the measured service times or measured on the device (--serve-mode).
// `inference_benchmark --help` lists the options.
#include "inference_program.h"

int main(int argc, char** argv) { return gpuperf::program::run_inference_program(argc, argv); }
