// Interconnect arithmetic and reporting, torch-free: nccl-tests' definitions, size sweeps, the
// P2P and collective rows of the report.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/base/format.h"
#include "gpuperf/base/error.h"
#include "gpuperf/report/micro_markdown.h"
#include "gpuperf/results/export.h"
#include "gpuperf/results/interconnect_result.h"
#include "gpuperf/results/micro_datasheet.h"
#include "gpuperf/results/micro_result.h"
#include "gpuperf/specs/specs.h"

namespace {

using Catch::Matchers::Contains;
using gpuperf::Collective;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

gpuperf::MicroResult made_up(const std::string& category, const std::string& variant,
                             const std::string& pair, double median, const std::string& unit) {
  gpuperf::MicroResult r;
  r.category = category;
  r.variant = variant;
  r.name = category + "/" + variant + "/" + pair;
  r.shape = "256 MiB";
  r.unit = unit;
  r.unit_scale = unit == "us" ? 1e-6 : 1e9;
  r.summary = gpuperf::summarize({median * 0.99, median, median * 1.01});
  return r;
}

gpuperf::GpuSpec made_up_spec() {
  gpuperf::GpuSpec s;
  s.id = "test-h200";
  s.name = "Test H200";
  s.link_bytes_per_s = 900e9;  // NVLink 4, bidirectional total
  s.pcie = "Gen5";
  return s;
}

gpuperf::MicroReport two_gpu_report() {
  gpuperf::MicroReport report;
  report.device.name = "NVIDIA H200";
  report.device.kind = "cuda";
  report.variant = "gpu";
  report.interconnect = "NCCL through c10d, 2 GPUs";
  for (const auto& [src, dst] : {std::pair<int, int>{0, 1}, {1, 0}}) {
    gpuperf::PeerLink link;
    link.src = src;
    link.dst = dst;
    link.p2p_access = true;
    link.type = "NVLink (NVSwitch)";
    link.detail = "NVLink through NVSwitch, 18 links up";
    report.peer_links.push_back(link);
  }
  report.results.push_back(made_up("p2p", "copy", "0->1", 394, "GB/s"));
  report.results.push_back(made_up("p2p", "copy", "1->0", 390, "GB/s"));
  report.results.push_back(made_up("p2p", "bidirectional", "0<->1", 740, "GB/s"));
  report.results.push_back(made_up("p2p", "latency", "0->1", 12.5, "us"));
  auto all_reduce = made_up("collective", "all-reduce", "128MiB", 281, "GB/s");
  all_reduce.shape = "128 MiB";
  all_reduce.figures = {{"algbw_gb_s", 281}, {"time_us", 477.6}, {"bus_factor", 1}, {"ranks", 2}};
  report.results.push_back(all_reduce);
  return report;
}

}  // namespace

TEST_CASE("bus bandwidth factors follow nccl-tests' PERFORMANCE.md for 2, 4 and 8 ranks",
          "[interconnect]") {
  // All-reduce: busbw = algbw * 2(n-1)/n; all-gather and reduce-scatter: algbw * (n-1)/n.
  const std::vector<std::pair<int, std::pair<double, double>>> expected = {
      {2, {1.0, 0.5}}, {4, {1.5, 0.75}}, {8, {1.75, 0.875}}};
  for (const auto& [n, factors] : expected) {
    CHECK(gpuperf::bus_bandwidth_factor(Collective::kAllReduce, n) == factors.first);
    CHECK(gpuperf::bus_bandwidth_factor(Collective::kAllGather, n) == factors.second);
    CHECK(gpuperf::bus_bandwidth_factor(Collective::kReduceScatter, n) == factors.second);
  }
  CHECK(gpuperf::bus_bandwidth_factor(Collective::kAllReduce, 1) == 0);
  CHECK_THROWS_AS(gpuperf::bus_bandwidth_factor(Collective::kAllReduce, 0), gpuperf::ConfigError);
  // 1 GiB all-reduced over 8 ranks in 6.0 ms: algbw 178.96 GB/s, busbw 313.2 GB/s.
  const double algbw = kGiB / 6.0e-3 / 1e9;
  CHECK(algbw == Approx(178.957).epsilon(1e-5));
  CHECK(algbw * gpuperf::bus_bandwidth_factor(Collective::kAllReduce, 8) ==
        Approx(313.175).epsilon(1e-5));
}

TEST_CASE("collective buffers follow nccl-tests' size S and give every rank whole elements",
          "[interconnect]") {
  // All-reduce: S is each rank's buffer.
  auto b = gpuperf::collective_buffers(Collective::kAllReduce, kMiB, 2, 4);
  CHECK(b.size_bytes == kMiB);
  CHECK((b.input_elements == 262144 && b.output_elements == 262144));
  // All-gather: S is the gathered output; each rank sends S/n.
  b = gpuperf::collective_buffers(Collective::kAllGather, kMiB, 2, 4);
  CHECK((b.input_elements == 131072 && b.output_elements == 262144));
  // Reduce-scatter: S is each rank's input; each receives S/n.
  b = gpuperf::collective_buffers(Collective::kReduceScatter, kMiB, 4, 4);
  CHECK((b.input_elements == 262144 && b.output_elements == 65536));
  // Three ranks: S rounds down to a multiple of 3 x 4 bytes.
  b = gpuperf::collective_buffers(Collective::kAllGather, kMiB, 3, 4);
  CHECK(b.size_bytes == 1048572);
  CHECK((b.input_elements == 87381 && b.output_elements == 3 * 87381));
  CHECK_THROWS_WITH(gpuperf::collective_buffers(Collective::kAllReduce, 8, 3, 4),
                    Contains("less than one 4-byte element per rank"));
  CHECK_THROWS_AS(gpuperf::collective_buffers(Collective::kAllReduce, kMiB, 0, 4),
                  gpuperf::ConfigError);
}

TEST_CASE("a collective's time is the slowest rank's mean per call", "[interconnect]") {
  CHECK(gpuperf::collective_seconds({0.010, 0.012}, 10) == Approx(0.0012));
  CHECK(gpuperf::collective_seconds({0.5}, 1) == 0.5);
  CHECK_THROWS_AS(gpuperf::collective_seconds({}, 10), gpuperf::ConfigError);
  CHECK_THROWS_AS(gpuperf::collective_seconds({0.01, 0.0}, 10), gpuperf::ConfigError);
  CHECK_THROWS_AS(gpuperf::collective_seconds({0.01}, 0), gpuperf::ConfigError);
}

TEST_CASE("collective names parse in several spellings and bad ones name the option",
          "[interconnect]") {
  const auto all =
      gpuperf::parse_collectives("all-reduce, AllGather,reduce_scatter,allreduce", "collectives");
  CHECK(all == gpuperf::all_collectives());
  CHECK(gpuperf::to_string(Collective::kReduceScatter) == "reduce-scatter");
  CHECK_THROWS_WITH(gpuperf::parse_collectives("all-reduce,broadcast", "collectives"),
                    Contains("collectives: unknown collective 'broadcast'"));
  CHECK_THROWS_WITH(gpuperf::parse_collectives("all-reduce,", "collectives"),
                    Contains("collectives: empty item"));
}

TEST_CASE("size lists take binary units and doubling or stepped sweeps", "[interconnect]") {
  const auto doubling = gpuperf::parse_byte_sizes("1M..1G", "collective-sizes");
  REQUIRE(doubling.size() == 11);
  CHECK(doubling.front() == kMiB);
  CHECK(doubling[7] == 128 * kMiB);
  CHECK(doubling.back() == kGiB);
  CHECK(gpuperf::parse_byte_sizes("1MiB..1GiB:4", "collective-sizes") ==
        std::vector<double>{kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB, kGiB});
  CHECK(gpuperf::parse_byte_sizes("4096, 64K,1MB,4096,2gib", "collective-sizes") ==
        std::vector<double>{4096, 65536, kMiB, 2 * kGiB});
  CHECK(gpuperf::parse_byte_sizes("3M..16M", "s") ==
        std::vector<double>{3 * kMiB, 6 * kMiB, 12 * kMiB});
  for (const char* bad : {"0", "1X", "4M..1M", "1M..4M:1", "1M..4M:x", "", "1M,,2M", "-1M"}) {
    CHECK_THROWS_WITH(gpuperf::parse_byte_sizes(bad, "collective-sizes"),
                      Contains("collective-sizes: "));
  }
  CHECK(gpuperf::format_exact_bytes(4) == "4 B");
  CHECK(gpuperf::format_exact_bytes(64 * 1024) == "64 KiB");
  CHECK(gpuperf::format_exact_bytes(1048572) == "1048572 B");
  CHECK(gpuperf::format_exact_bytes(1.5 * kGiB) == "1536 MiB");
}

TEST_CASE("P2P and collective rows compare with the link's per-direction datasheet figure",
          "[interconnect]") {
  gpuperf::MicroReport report = two_gpu_report();
  const gpuperf::GpuSpec spec = made_up_spec();
  gpuperf::apply_datasheet(report, &spec);
  CHECK(report.find("p2p/copy/0->1")->datasheet_key == "link_per_direction");
  CHECK(report.find("p2p/copy/0->1")->datasheet == Approx(450));
  CHECK(report.find("p2p/copy/0->1")->percent_of_datasheet == Approx(100 * 394 / 450.0));
  CHECK(report.find("p2p/bidirectional/0<->1")->datasheet == Approx(900));
  CHECK(report.find("collective/all-reduce/128MiB")->datasheet == Approx(450));
  CHECK(std::isnan(report.find("p2p/latency/0->1")->datasheet));

  // The seeds' table's link cell: the fastest one-way copy over the per-direction figure.
  CHECK(gpuperf::seeds_table_row(report).back() == "394 / 450");

  std::ostringstream md;
  gpuperf::write_markdown(md, report);
  const std::string text = md.str();
  CHECK_THAT(text, Contains("| 0 | 1 | NVLink through NVSwitch, 18 links up | on | 394 | 740 | "
                            "12.5 |"));
  CHECK_THAT(text, Contains("### Collectives (NCCL through c10d, 2 GPUs)"));
  CHECK_THAT(text, Contains("| all-reduce | 128 MiB | 478 | 281 | 281 | 450 | ok |"));

  const std::string json = gpuperf::to_json(report);
  CHECK_THAT(json, Contains("\"peer_links\": ["));
  CHECK_THAT(json, Contains("\"type\": \"NVLink (NVSwitch)\""));
  CHECK_THAT(json, Contains("\"algbw_gb_s\": 281.0"));
  CHECK_THAT(json, Contains("\"interconnect\": \"NCCL through c10d, 2 GPUs\""));

  // Pairs that are on PCIe only compare with PCIe Gen5 x16: 64 GB/s one way.
  for (auto& link : report.peer_links) link.type = "PCIe";
  gpuperf::apply_datasheet(report, &spec);
  CHECK(report.find("p2p/copy/0->1")->datasheet_key == "pcie_per_direction");
  CHECK(report.find("p2p/copy/0->1")->datasheet == Approx(64));
  CHECK(report.find("p2p/bidirectional/0<->1")->datasheet == Approx(128));
}

TEST_CASE("a report without P2P results leaves the link cell's measured side empty",
          "[interconnect]") {
  gpuperf::MicroReport report;
  report.device.name = "NVIDIA H200";
  report.variant = "gpu";
  const gpuperf::GpuSpec spec = made_up_spec();
  gpuperf::apply_datasheet(report, &spec);
  CHECK(gpuperf::seeds_table_row(report).back() == "- / 450");
  std::ostringstream md;
  gpuperf::write_markdown(md, report);
  CHECK_THAT(md.str(), Contains("not measured in this run."));
  CHECK_THAT(md.str(), !Contains("### P2P copies"));
}

TEST_CASE("The micro CSV gives every figure in a base unit, so no column mixes TFLOP/s and GB/s",
          "[interconnect][csv]") {
  gpuperf::MicroReport report = two_gpu_report();
  auto gemm = made_up("gemm", "bf16", "4096", 500, "TFLOP/s");
  gemm.unit_scale = 1e12;
  gemm.datasheet = 989;
  report.results.insert(report.results.begin(), gemm);
  for (auto& r : report.results) {
    r.windows = {r.summary.median * 0.99, r.summary.median, r.summary.median * 1.01};  // measured
  }
  std::ostringstream csv;
  gpuperf::write_csv(csv, report);
  // Each line as a map from the header's names to its cells (no cell here holds a comma).
  std::istringstream lines(csv.str());
  const auto cells = [](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
    return out;
  };
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = cells(line);
  std::map<std::string, std::map<std::string, std::string>> rows;
  while (std::getline(lines, line)) {
    const auto row = cells(line);
    REQUIRE(row.size() == header.size());
    std::map<std::string, std::string> named;
    for (std::size_t i = 0; i < row.size(); ++i) named[header[i]] = row[i];
    rows[named["name"]] = named;
  }
  const auto& g = rows.at("gemm/bf16/4096");
  CHECK(g.at("unit") == "FLOP/s");
  CHECK(std::stod(g.at("median")) == Approx(500e12));
  CHECK(std::stod(g.at("datasheet")) == Approx(989e12));
  const auto& copy = rows.at("p2p/copy/0->1");
  CHECK(copy.at("unit") == "B/s");
  CHECK(std::stod(copy.at("median")) == Approx(394e9));
  CHECK(std::stod(copy.at("ci95_high")) >= std::stod(copy.at("ci95_low")));
  const auto& latency = rows.at("p2p/latency/0->1");
  CHECK(latency.at("unit") == "s");
  CHECK(std::stod(latency.at("median")) == Approx(12.5e-6));
}
