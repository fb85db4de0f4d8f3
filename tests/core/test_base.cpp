// The base module: files (regular inputs of bounded size, outputs never an input, temporary and
// probe files that follow no link, one identity per file, the file-size limit), the checkpoint
// container, and the unit formatters.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuperf/base/checkpoint_file.h"
#include "gpuperf/base/choices.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/base/format.h"

namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Names in the current folder that start with `prefix`.
std::vector<std::string> names_starting(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(".")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

}  // namespace

TEST_CASE("Input files must be regular files of bounded size, and outputs never an input",
          "[report]") {
  CHECK_THROWS_WITH(gpuperf::read_text_file("/dev/zero"), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(gpuperf::read_text_file("."), Catch::Contains("not a regular file"));
  CHECK_THROWS_AS(gpuperf::read_text_file("/nonexistent/x.json"), gpuperf::IoError);
  const std::string input = "test_report_input.json";
  { std::ofstream(input) << "{}"; }
  CHECK(gpuperf::read_text_file(input) == "{}");
  CHECK_THROWS_WITH(gpuperf::check_not_an_input("./" + input, {input}, "--output"),
                    Catch::Contains("is one of the input files"));
  const std::string link = "test_report_link.json";
  std::remove(link.c_str());
  REQUIRE(::symlink(input.c_str(), link.c_str()) == 0);
  CHECK_THROWS_WITH(gpuperf::check_not_an_input(link, {input}, "--output"),
                    Catch::Contains("is one of the input files"));
  CHECK_NOTHROW(gpuperf::check_not_an_input("test_report_other.json", {input}, "--output"));
  std::remove(link.c_str());
  std::remove(input.c_str());
}

TEST_CASE("Temporary and probe files never follow a planted link and have unpredictable names",
          "[report][files]") {
  // #33: "<out>.tmp-<pid>" and "<out>.probe-<pid>" were opened O_TRUNC, following links: a link
  // planted there truncated and overwrote its target.
  const std::string victim = "test_files_victim.txt", out = "test_files_out.json";
  { std::ofstream(victim) << "precious"; }
  std::remove(out.c_str());
  const std::string pid = std::to_string(::getpid());
  for (const char* suffix : {".tmp-", ".probe-"}) {
    const std::string planted = out + suffix + pid;
    std::remove(planted.c_str());
    REQUIRE(::symlink(victim.c_str(), planted.c_str()) == 0);
  }
  CHECK_NOTHROW(gpuperf::check_writable(out, "json"));
  gpuperf::write_text_file_atomically("{}", out);
  CHECK(file_text(victim) == "precious");
  CHECK(file_text(out) == "{}");
  struct stat st {};
  REQUIRE(::lstat(out.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  for (const char* suffix : {".tmp-", ".probe-"}) std::remove((out + suffix + pid).c_str());
  {
    gpuperf::TemporaryFile a(out), b(out);
    CHECK(a.path() != b.path());
    CHECK(a.path().rfind(out + ".tmp-", 0) == 0);
    CHECK(std::filesystem::is_regular_file(a.path()));  // created by the constructor
  }
  CHECK(names_starting(out + ".").empty());  // both removed when they went
  std::remove(out.c_str());
  std::remove(victim.c_str());
}

TEST_CASE("An output that leads into /dev or /proc is refused, whatever it resolves to",
          "[report][files]") {
  // #33: with standard output a regular file, /dev/stdout resolves to that file and passed; as
  // root the rename then replaced the system's /dev/stdout link.
  const std::string file = "test_files_stdout.txt", link = "test_files_fd_link.json";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  const std::string fd_path = "/proc/self/fd/" + std::to_string(fd);
  std::remove(link.c_str());
  REQUIRE(::symlink(fd_path.c_str(), link.c_str()) == 0);
  CHECK_THROWS_WITH(gpuperf::check_writable(fd_path, "json"),
                    Catch::Contains("json: ") && Catch::Contains("/proc"));
  CHECK_THROWS_WITH(gpuperf::check_writable(link, "csv"),
                    Catch::Contains("csv: ") && Catch::Contains(link));
  CHECK_THROWS_AS(gpuperf::check_writable("/dev/stdout", "json"), gpuperf::ConfigError);
  CHECK_THROWS_AS(gpuperf::check_writable("/dev/full", "json"), gpuperf::ConfigError);
  CHECK_THROWS_AS(gpuperf::check_writable("/dev/new-file.json", "json"), gpuperf::ConfigError);
  CHECK_NOTHROW(gpuperf::check_writable("-", "json"));
  ::close(fd);
  std::remove(link.c_str());
  std::remove(file.c_str());
}

TEST_CASE("One file has one identity however it is spelled", "[report][files]") {
  // #33: x.csv and ./x.csv (a file not yet there) compared unequal, and both outputs were written.
  std::filesystem::create_directories("test_files_dir");
  const std::string cwd = std::filesystem::current_path().string();
  const std::string x = gpuperf::file_identity("test_files_new.csv");
  CHECK(gpuperf::file_identity("./test_files_new.csv") == x);
  CHECK(gpuperf::file_identity(cwd + "/test_files_new.csv") == x);
  CHECK(gpuperf::file_identity("test_files_dir/../test_files_new.csv") == x);
  CHECK(gpuperf::file_identity("test_files_new.json") != x);
  CHECK(gpuperf::file_identity("test_files_dir/test_files_new.csv") != x);
  CHECK_THROWS_WITH(
      gpuperf::check_not_an_input("test_files_dir/../in.json", {"./in.json"}, "--output"),
      Catch::Contains("is one of the input files"));
  std::filesystem::remove_all("test_files_dir");
}

TEST_CASE("A write past the file-size limit is an IoError with the reason, leaving nothing",
          "[report][files]") {
  // #33: SIGXFSZ killed the process. In a child, so that the limit and the signal stay there.
  const std::string out = "test_files_big.json";
  std::remove(out.c_str());
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      gpuperf::write_text_file_atomically(std::string(100000, 'x'), out);
    } catch (const gpuperf::IoError& e) {
      const std::string what = e.what();
      const bool named = what.find(out) != std::string::npos;
      ::_exit(what.find("File too large") != std::string::npos && named ? 0 : 3);
    } catch (...) {
      ::_exit(4);
    }
    ::_exit(5);  // written: the limit did not hold
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK(names_starting(out + ".").empty());
}

TEST_CASE("A checkpoint container that is cut, padded, flipped or of another format is refused",
          "[report][files][checkpoint]") {
  gpuperf::CheckpointHeader header;
  header.identity = {{"param fc.weight", "Float [10, 64]"}, {"optimizer", "adam (torch::optim)"}};
  header.tensors_checksum = 0x0123456789abcdefull;
  const std::string payload = "PK\x03\x04 some archive bytes";
  const std::string bytes = gpuperf::encode_checkpoint(header, payload);
  const auto good = gpuperf::decode_checkpoint(bytes, "c.ckpt");
  CHECK(good.payload == payload);
  CHECK(good.header.identity == header.identity);
  CHECK(good.header.tensors_checksum == header.tensors_checksum);
  // Cut at every length, padded, and every byte flipped: refused, naming the file.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("cut at " << n);
    CHECK_THROWS_WITH(gpuperf::decode_checkpoint(bytes.substr(0, n), "c.ckpt"),
                      Catch::Contains("'c.ckpt'"));
  }
  CHECK_THROWS_WITH(gpuperf::decode_checkpoint(bytes + "x", "c.ckpt"),
                    Catch::Contains("1 bytes after its payload"));
  const std::size_t payload_at = bytes.size() - payload.size();
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x01);
    INFO("flipped byte " << i);
    if (i >= payload_at) {
      CHECK_THROWS_WITH(gpuperf::decode_checkpoint(flipped, "c.ckpt"),
                        Catch::Contains("is corrupt"));
    } else {
      // In the header a flip is refused, or changes the identity or checksum it records (which
      // TrainStep::load compares).
      try {
        const auto read = gpuperf::decode_checkpoint(flipped, "c.ckpt");
        CHECK((read.header.identity != header.identity ||
               read.header.tensors_checksum != header.tensors_checksum));
      } catch (const gpuperf::IoError&) {
      }
    }
  }
  CHECK_THROWS_WITH(gpuperf::decode_checkpoint(payload, "old.pt"), Catch::Contains("format 1"));
  CHECK_THROWS_WITH(gpuperf::decode_checkpoint("gpuperf.checkpoint/3\n", "c.ckpt"),
                    Catch::Contains("format '3'"));
  CHECK(gpuperf::identity_mismatch(header.identity, header.identity).empty());
  auto other = header.identity;
  other[0].second = "Float [10, 32]";
  CHECK(gpuperf::identity_mismatch(header.identity, other) ==
        "param fc.weight is Float [10, 64] in the checkpoint, Float [10, 32] here");
}

TEST_CASE("A checkpoint is read only from a regular file: a FIFO is refused, never waited on",
          "[report][files][checkpoint]") {
  const std::string fifo = "test_files_fifo.ckpt";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(gpuperf::read_binary_file(fifo, 1 << 20),
                    Catch::Contains("not a regular file"));
  std::remove(fifo.c_str());
  CHECK_THROWS_WITH(gpuperf::read_binary_file(".", 1 << 20), Catch::Contains("'.'"));
}

TEST_CASE("the unit formatters print what printf prints, at any length", "[compare]") {
  // The reference: the C library's printf into a buffer large enough for any double.
  const auto printf_of = [](const char* format, int digits, double v) {
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, format, digits, v);
    return std::string(buffer);
  };
  for (const double v : {0.0, 0.1234567, 7e9, -2.5, 1e-300, 1e300, -1.7976931348623157e308}) {
    CHECK(gpuperf::format_number(v, 4) == printf_of("%.*g", 4, v));
    CHECK(gpuperf::format_number(v, 17) == printf_of("%.*g", 17, v));
    CHECK(gpuperf::format_fixed(v, 2) == printf_of("%.*f", 2, v));
  }
  CHECK(gpuperf::format_fixed(1e300, 0).size() == 301);  // once cut at 63 characters
  CHECK(gpuperf::format_number(7e9, 6) == "7e+09");
  CHECK(gpuperf::format_fixed(2.5, 2) == "2.50");
  CHECK(gpuperf::format_grouped(1281167) == "1,281,167");
  CHECK(gpuperf::format_grouped(999.6) == "1,000");
  CHECK(gpuperf::format_grouped(-1234) == "-1,234");
  CHECK(gpuperf::format_grouped(-0.2) == "0");
  CHECK(gpuperf::format_bytes(512) == "512 B");
  CHECK(gpuperf::format_bytes(1536) == "1.50 KiB");
  CHECK(gpuperf::format_bytes(1.5 * 1024 * 1024 * 1024) == "1.50 GiB");
  CHECK(gpuperf::format_bytes(std::nan("")) == "n/a");
  CHECK(gpuperf::format_duration(7500) == "2 h 05 min");
  CHECK(gpuperf::format_duration(90) == "1.5 min");
  CHECK(gpuperf::format_duration(12.34) == "12.3 s");
  CHECK(gpuperf::format_duration(std::nan("")) == "n/a");
}

TEST_CASE("one formatter per unit: percent, ms, GB, grouped counts, exact sizes, or n/a",
          "[compare]") {
  const double nan = std::nan("");
  CHECK(gpuperf::format_fixed_or(2.345, 1) == "2.3");
  CHECK(gpuperf::format_fixed_or(nan, 1) == "n/a");
  CHECK(gpuperf::format_fixed_or(-INFINITY, 1, "-") == "-");
  CHECK(gpuperf::format_grouped(25557032) == "25,557,032");
  CHECK(gpuperf::format_grouped(-1234.4) == "-1,234");
  CHECK(gpuperf::format_grouped(999.5) == "1,000");
  CHECK(gpuperf::format_grouped(-0.2) == "0");
  CHECK(gpuperf::format_grouped(nan) == "n/a");
  CHECK(gpuperf::format_percent(0.194) == "19.4%");
  CHECK(gpuperf::format_percent(0.1) == "10%");
  CHECK(gpuperf::format_percent(0.0534, 2) == "5.3%");
  CHECK(gpuperf::format_percent(nan) == "n/a");
  CHECK(gpuperf::format_ms(0.0012345) == "1.234 ms");
  CHECK(gpuperf::format_ms(0.5, 1) == "500.0 ms");
  CHECK(gpuperf::format_ms(nan) == "n/a");
  CHECK(gpuperf::format_gb(80e9) == "80 GB");
  CHECK(gpuperf::format_gb(12.3456e9) == "12.35 GB");
  CHECK(gpuperf::format_gb(5e7) == "0.05 GB");
  CHECK(gpuperf::format_gb(nan) == "n/a");
  CHECK(gpuperf::format_exact_bytes(1536.0 * 1024 * 1024) == "1536 MiB");
  CHECK(gpuperf::format_exact_bytes(1048572) == "1048572 B");
  CHECK(gpuperf::format_exact_bytes(4.0 * 1024 * 1024 * 1024) == "4 GiB");
  CHECK(gpuperf::format_exact_bytes(0) == "0 B");
}

TEST_CASE("the decode choice reads its three spellings back and names a bad one", "[choices]") {
  for (const gpuperf::ImageDecode d :
       {gpuperf::ImageDecode::kAuto, gpuperf::ImageDecode::kCpu, gpuperf::ImageDecode::kGpu}) {
    CHECK(gpuperf::parse_image_decode(gpuperf::to_string(d)) == d);
  }
  CHECK(gpuperf::to_string(gpuperf::ImageDecode::kGpu) == "gpu");
  CHECK_THROWS_WITH(gpuperf::parse_image_decode("nvjpeg", "decode"),
                    Catch::Contains("decode") && Catch::Contains("'nvjpeg'") &&
                        Catch::Contains("auto, cpu, gpu"));
}
