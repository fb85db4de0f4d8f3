// libFuzzer target: the rental-price reader (gpuperf.rental_prices/1), then the advisor costing a
// run at what it accepted (fuzz_common.h states the contract). Registered in CTest by
// tests/fuzz/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_common.h"
#include "gpuperf/specs/rental_prices.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuperf;
  std::vector<RentalPrice> prices;
  try {
    prices = rental_prices_from_json(fuzz::text_of(data, size), "fuzz.json", fuzz::shipped_specs());
  } catch (const Error&) {
    return 0;
  }
  // What the reader accepted must cost a run and print without a throw: the advisor refuses a
  // table only for what the reader already refused.
  AdvisorRequest request;
  request.model = "resnet50";
  request.batch_size = 64;
  request.epochs = 90;
  request.budget_usd = 100;
  std::ostringstream out;
  try {
    write_advice(
        out, request,
        advise_with(request, fuzz::shipped_specs(), {}, fuzz::shipped_published(), prices));
  } catch (const Error& e) {
    fuzz::broken(std::string("the advisor refuses a table the reader accepted: ") + e.what());
  }
  return 0;
}
