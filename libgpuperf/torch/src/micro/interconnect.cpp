// P2P copies between GPUs, timed with CUDA events, and the links between them from NVML.
#include "gpuperf/micro/interconnect.h"

#include <torch/types.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/base/format.h"
#include "gpuperf/device/device.h"
#include "gpuperf/base/error.h"
#include "gpuperf/telemetry/telemetry.h"
#include "gpuperf/timing/measure.h"
#include "micro/micro_internal.h"

#if GPUPERF_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/PeerToPeerAccess.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace gpuperf {
namespace {

std::string pair_name(int a, int b, const char* arrow) {
  return std::to_string(a) + arrow + std::to_string(b);
}

#if GPUPERF_WITH_CUDA

constexpr double kGiga = 1e9;

MicroResult p2p_result(const std::string& variant, const std::string& pair, double buffer_bytes) {
  MicroResult r;
  r.category = "p2p";
  r.variant = variant;
  r.name = "p2p/" + variant + "/" + pair;
  r.shape = format_exact_bytes(buffer_bytes);
  r.buffer_bytes = buffer_bytes;
  r.operand_sets = 1;
  return r;
}

torch::Tensor on_gpu(double bytes, int device, bool random) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, device);
  const auto elements = static_cast<std::int64_t>(bytes / 4);
  return random ? torch::randn({elements}, options) : torch::empty({elements}, options);
}

// One way: dst.copy_(src) from cuda:src to cuda:dst. ATen runs the copy on the source device's
// current stream (after a two-way event barrier with the destination's), so events on that
// stream bracket it.
MicroResult time_one_way(int src, int dst, double bytes, const MicroOptions& options) {
  MicroResult r = p2p_result("copy", pair_name(src, dst, "->"), bytes);
  r.work_per_call = bytes;
  r.unit = "GB/s";
  r.unit_scale = kGiga;
  r.note = "dst.copy_(src, non_blocking), cuda:" + std::to_string(src) +
           " -> cuda:" + std::to_string(dst) + "; bytes counted once";
  const torch::Tensor from = on_gpu(bytes, src, true);
  torch::Tensor to = on_gpu(bytes, dst, false);
  auto timer = make_cuda_event_timer(src);
  detail::time_calls(
      r, [&] { to.copy_(from, /*non_blocking=*/true); }, *timer, options);
  return r;
}

// The time of one small copy issued back to back (the latency the copy path adds per call,
// including ATen's event barrier), microseconds per call.
MicroResult time_latency(int src, int dst, double bytes, const MicroOptions& options) {
  MicroResult r = p2p_result("latency", pair_name(src, dst, "->"), bytes);
  r.work_per_call = 1;  // calls: measure() gives calls per second, inverted below
  r.unit = "us";
  r.unit_scale = 1e-6;
  r.note = "time per dst.copy_(src) of " + format_exact_bytes(bytes) + ", back to back";
  const torch::Tensor from = on_gpu(bytes, src, true);
  torch::Tensor to = on_gpu(bytes, dst, false);
  auto timer = make_cuda_event_timer(src);
  MeasureOptions m;
  m.warmup = options.warmup;
  m.steps_per_window = options.calls_per_window;
  m.windows = options.windows;
  const Measurement measured =
      measure([&] { to.copy_(from, /*non_blocking=*/true); }, 1.0, *timer, m);
  for (double calls_per_second : measured.window_throughput)
    r.windows.push_back(1e6 / calls_per_second);
  r.summary = summarize(r.windows);
  r.warmup_calls = options.warmup;
  r.calls_per_window = options.calls_per_window;
  return r;
}

// Both ways at once: a -> b on a side stream of a, b -> a on a side stream of b, forked from and
// joined back into a's current stream (where the timer's events go) once per call. Inside each
// copy's stream guard only the source device's current stream is the side stream, so ATen's
// barrier events land on the other device's default stream and the two copies do not wait for
// each other. Bytes of both copies count.
MicroResult time_bidirectional(int a, int b, double bytes, const MicroOptions& options) {
  MicroResult r = p2p_result("bidirectional", pair_name(a, b, "<->"), bytes);
  r.work_per_call = 2 * bytes;
  r.unit = "GB/s";
  r.unit_scale = kGiga;
  r.note = "copy_ both ways at once on two side streams; bytes of both directions";
  const torch::Tensor a_src = on_gpu(bytes, a, true);
  torch::Tensor a_dst = on_gpu(bytes, b, false);
  const torch::Tensor b_src = on_gpu(bytes, b, true);
  torch::Tensor b_dst = on_gpu(bytes, a, false);
  const auto index_a = static_cast<c10::DeviceIndex>(a);
  const auto index_b = static_cast<c10::DeviceIndex>(b);
  c10::cuda::CUDAStream side_a = c10::cuda::getStreamFromPool(false, index_a);
  c10::cuda::CUDAStream side_b = c10::cuda::getStreamFromPool(false, index_b);
  at::cuda::CUDAEvent fork;
  at::cuda::CUDAEvent done_a;
  at::cuda::CUDAEvent done_b;
  const auto step = [&] {
    c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(index_a);
    fork.record(main);
    fork.block(side_a);
    fork.block(side_b);
    {
      c10::cuda::CUDAStreamGuard guard(side_a);
      a_dst.copy_(a_src, /*non_blocking=*/true);
    }
    {
      c10::cuda::CUDAStreamGuard guard(side_b);
      b_dst.copy_(b_src, /*non_blocking=*/true);
    }
    done_a.record(side_a);
    done_b.record(side_b);
    done_a.block(main);
    done_b.block(main);
  };
  auto timer = make_cuda_event_timer(a);
  detail::time_calls(r, step, *timer, options);
  return r;
}

#endif

void check_copy_size(double bytes, const char* what) {
  const double elements = std::floor(bytes / 4);
  if (!(bytes >= 4) || elements * 4 != bytes) {
    throw ConfigError(std::string("P2P ") + what +
                      ": size must be a positive multiple of 4 bytes, got " +
                      std::to_string(bytes));
  }
}

}  // namespace

int cuda_device_count() {
#if GPUPERF_WITH_CUDA
  return static_cast<int>(c10::cuda::device_count());
#else
  return 0;
#endif
}

std::vector<PeerLink> describe_peer_links(const std::vector<int>& devices,
                                          std::vector<std::string>* warnings) {
  std::vector<PeerLink> links;
  for (int src : devices) {
    for (int dst : devices) {
      if (src == dst) continue;
      PeerLink link;
      link.src = src;
      link.dst = dst;
      links.push_back(link);
    }
  }
  const auto warn = [&](const std::string& text) {
    if (warnings) warnings->push_back(text);
  };
  OpenedTelemetry telemetry = open_nvml_telemetry();
  if (!telemetry) {
    warn("link types unknown: NVML unavailable (" + telemetry.unavailable_reason + ")");
    return links;
  }
  // CUDA and NVML number GPUs differently: match them by PCI location.
  std::vector<TelemetryDevice*> nvml(devices.size(), nullptr);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const PciLocation pci =
        cuda_pci_location(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(devices[i])));
    nvml[i] = telemetry.system->find_by_pci_location(pci.domain, pci.bus, pci.device);
    if (nvml[i] == nullptr) {
      warn("link types: NVML has no GPU at cuda:" + std::to_string(devices[i]) + "'s PCI location");
    }
  }
  const auto position = [&](int device) {
    return static_cast<std::size_t>(std::find(devices.begin(), devices.end(), device) -
                                    devices.begin());
  };
  for (PeerLink& link : links) {
    TelemetryDevice* a = nvml[position(link.src)];
    TelemetryDevice* b = nvml[position(link.dst)];
    if (a == nullptr || b == nullptr) continue;
    try {
      const GpuLink described = describe_gpu_link(*telemetry.system, *a, *b);
      link.type = described.type;
      link.nvlinks = described.nvlinks;
      link.detail = described.detail;
    } catch (const NvmlError& e) {
      warn("link " + pair_name(link.src, link.dst, "->") + ": " + e.what());
    }
  }
  return links;
}

P2pReport run_p2p(const std::vector<int>& devices, double copy_bytes, double latency_bytes,
                  const MicroOptions& options) {
  options.validate();
  check_copy_size(copy_bytes, "copy");
  check_copy_size(latency_bytes, "latency copy");
  if (devices.size() < 2) {
    throw ConfigError("P2P needs at least 2 GPUs, got " + std::to_string(devices.size()));
  }
  const int count = cuda_device_count();
  for (int d : devices) {
    if (d < 0 || d >= count) {
      throw ConfigError("P2P: no CUDA device " + std::to_string(d) + " (" + std::to_string(count) +
                        " present)");
    }
  }
#if GPUPERF_WITH_CUDA
  P2pReport report;
  report.links = describe_peer_links(devices, &report.warnings);
  for (PeerLink& link : report.links) {
    link.p2p_access = at::cuda::get_p2p_access(static_cast<c10::DeviceIndex>(link.src),
                                               static_cast<c10::DeviceIndex>(link.dst));
    if (!link.p2p_access) {
      report.warnings.push_back("P2P access is off for " + pair_name(link.src, link.dst, "->") +
                                ": copies go through host memory");
    }
  }
  torch::manual_seed(options.seed);
  for (const PeerLink& link : report.links) {
    report.results.push_back(time_one_way(link.src, link.dst, copy_bytes, options));
  }
  for (const PeerLink& link : report.links) {
    if (link.src < link.dst) {
      report.results.push_back(time_bidirectional(link.src, link.dst, copy_bytes, options));
    }
  }
  for (const PeerLink& link : report.links) {
    report.results.push_back(time_latency(link.src, link.dst, latency_bytes, options));
  }
  for (int d : devices) synchronize(torch::Device(torch::kCUDA, d));
  return report;
#else
  throw ConfigError("P2P copies need CUDA: gpuperf was built with a LibTorch without it");
#endif
}

}  // namespace gpuperf
