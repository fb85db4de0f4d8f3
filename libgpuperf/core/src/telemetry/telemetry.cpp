// Device lookup shared by every TelemetrySystem.
#include "gpuperf/telemetry/telemetry.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

namespace gpuperf {
namespace {

// Parses 1 to 8 hexadecimal digits; empty for anything else.
std::optional<unsigned> parse_hex(std::string_view text) {
  if (text.empty() || text.size() > 8) return std::nullopt;
  unsigned value = 0;
  for (const char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const int digit = std::isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    value = value * 16 + static_cast<unsigned>(digit);
  }
  return value;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<PciLocation> parse_pci_bus_id(std::string_view text) {
  // [domain:]bus:device.function; CUDA writes a 4-digit domain, NVML an 8-digit one.
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto last_colon = text.rfind(':', dot);
  if (last_colon == std::string_view::npos) return std::nullopt;
  const auto first_colon =
      last_colon > 0 ? text.rfind(':', last_colon - 1) : std::string_view::npos;
  const bool has_domain = first_colon != std::string_view::npos;
  const std::string_view bus = has_domain
                                   ? text.substr(first_colon + 1, last_colon - first_colon - 1)
                                   : text.substr(0, last_colon);
  const auto parsed_bus = parse_hex(bus);
  const auto parsed_device = parse_hex(text.substr(last_colon + 1, dot - last_colon - 1));
  const auto parsed_function = parse_hex(text.substr(dot + 1));
  const auto parsed_domain =
      has_domain ? parse_hex(text.substr(0, first_colon)) : std::optional<unsigned>(0);
  if (!parsed_bus || !parsed_device || !parsed_function || !parsed_domain) return std::nullopt;
  return PciLocation{*parsed_domain, *parsed_bus, *parsed_device, *parsed_function};
}

std::string to_string(PcieTopology level) {
  switch (level) {
    case PcieTopology::kSameBoard:
      return "same board";
    case PcieTopology::kSingleSwitch:
      return "one PCIe switch (PIX)";
    case PcieTopology::kMultipleSwitches:
      return "several PCIe switches (PXB)";
    case PcieTopology::kHostBridge:
      return "through a host bridge (PHB)";
    case PcieTopology::kNumaNode:
      return "host bridges of one NUMA node (NODE)";
    case PcieTopology::kSystem:
      return "across CPU sockets (SYS)";
  }
  return "unknown";
}

namespace {

// Active NVLinks of `from` whose far end is `to`'s PCI function.
int direct_links(const TelemetryDevice& from, const TelemetryDevice& to) {
  const auto remote = from.nvlink_remote_pci_bus_ids();
  const auto to_id = to.pci_bus_id();
  if (!remote || !to_id) return 0;
  const auto target = parse_pci_bus_id(*to_id);
  if (!target) return 0;
  int count = 0;
  for (const std::string& id : *remote) {
    const auto location = parse_pci_bus_id(id);
    if (location && *location == *target) ++count;
  }
  return count;
}

}  // namespace

GpuLink describe_gpu_link(TelemetrySystem& system, TelemetryDevice& a, TelemetryDevice& b) {
  GpuLink link;
  link.pcie = system.common_ancestor(a, b);
  // Links are symmetric, but a driver may answer for one end only: take the larger count.
  link.nvlinks = std::max(direct_links(a, b), direct_links(b, a));
  if (link.nvlinks > 0) {
    link.type = "NVLink";
    link.detail = "NVLink x" + std::to_string(link.nvlinks) + ", direct";
  } else if (system.nvlink_p2p(a, b).value_or(false)) {
    link.type = "NVLink (NVSwitch)";
    const auto up = a.nvlink_links_up();
    link.detail = "NVLink through NVSwitch" + (up ? ", " + std::to_string(*up) + " links up" : "");
  } else if (link.pcie) {
    link.type = "PCIe";
    link.detail = "PCIe, " + to_string(*link.pcie);
  } else {
    link.detail = "NVML reports no NVLink and no PCIe path";
  }
  return link;
}

TelemetryDevice* TelemetrySystem::find_by_pci_location(unsigned domain, unsigned bus,
                                                       unsigned device_number) {
  for (std::size_t i = 0; i < device_count(); ++i) {
    TelemetryDevice& candidate = device(i);
    const auto id = candidate.pci_bus_id();
    if (!id) continue;
    const auto location = parse_pci_bus_id(*id);
    if (location && location->domain == domain && location->bus == bus &&
        location->device == device_number) {
      return &candidate;
    }
  }
  return nullptr;
}

TelemetryDevice* TelemetrySystem::find_by_pci_bus_id(std::string_view bus_id) {
  const auto wanted = parse_pci_bus_id(bus_id);
  if (!wanted) return nullptr;
  return find_by_pci_location(wanted->domain, wanted->bus, wanted->device);
}

TelemetryDevice* TelemetrySystem::find_by_uuid(std::string_view uuid) {
  for (std::size_t i = 0; i < device_count(); ++i) {
    TelemetryDevice& candidate = device(i);
    const auto id = candidate.uuid();
    if (id && equal_ignoring_case(*id, uuid)) return &candidate;
  }
  return nullptr;
}

}  // namespace gpuperf
