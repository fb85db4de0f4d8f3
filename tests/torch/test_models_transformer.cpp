#include "testing.h"

#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpuperf/amp/autocast.h"
#include "gpuperf/base/error.h"
#include "gpuperf/models/fusion.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/models/transformer.h"
#include "gpuperf/optim/fused_optimizer.h"
#include "gpuperf/optim/weight_copies.h"
#include "gpuperf/specs/efficiency.h"
#include "gpuperf/train/batch_source.h"
#include "gpuperf/train/train_step.h"
#include "gpuperf/train/training_run.h"

namespace {

std::int64_t numel(torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

gpuperf::GptOptions tiny_gpt() {
  gpuperf::GptOptions o;
  o.vocabulary = 61;
  o.context = 16;
  o.layers = 2;
  o.heads = 2;
  o.width = 16;
  return o;
}

gpuperf::LlamaOptions tiny_llama(std::int64_t kv_heads, bool tied) {
  gpuperf::LlamaOptions o;
  o.vocabulary = 53;
  o.context = 16;
  o.layers = 2;
  o.heads = 4;
  o.kv_heads = kv_heads;
  o.width = 16;
  o.hidden = 24;
  o.tie_embeddings = tied;
  return o;
}

// softmax(q k^T / sqrt(d) + causal mask) v in float64, one score at a time.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k,
                                  const torch::Tensor& v) {
  // Grouped-query attention: kv head j serves query heads j x group .. j x group + group - 1.
  const std::int64_t group = q.size(1) / k.size(1);
  const torch::Tensor q64 = q.to(torch::kDouble).cpu();
  const torch::Tensor k64 = k.to(torch::kDouble).cpu().repeat_interleave(group, 1);
  const torch::Tensor v64 = v.to(torch::kDouble).cpu().repeat_interleave(group, 1);
  const std::int64_t t = q.size(2);
  torch::Tensor out = torch::zeros_like(q64);
  for (std::int64_t i = 0; i < t; ++i) {
    // Positions 0..i only.
    const torch::Tensor scores =
        torch::matmul(q64.narrow(2, i, 1), k64.narrow(2, 0, i + 1).transpose(-2, -1)) /
        std::sqrt(static_cast<double>(q.size(3)));
    out.narrow(2, i, 1).copy_(torch::matmul(torch::softmax(scores, -1), v64.narrow(2, 0, i + 1)));
  }
  return out;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpuperf_test_" + name)).string();
}

void write_bytes(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

}  // namespace

TEST_CASE("GPT-2 and Llama 3.2 presets have their published parameter counts", "[models][lm]") {
  // Hugging Face's GPT-2 checkpoints (vocabulary 50,257): 124,439,808 / 354,823,168 /
  // 774,030,080 / 1,557,611,200 parameters; Meta's Llama 3.2 1B and 3B model cards: 1.24B, 3.21B.
  auto unpadded = [](gpuperf::GptOptions o) {
    o.vocabulary = 50257;
    return gpuperf::parameter_count(o);
  };
  CHECK(unpadded(gpuperf::GptOptions::gpt2_124m()) == 124439808);
  CHECK(unpadded(gpuperf::GptOptions::gpt2_355m()) == 354823168);
  CHECK(unpadded(gpuperf::GptOptions::gpt2_774m()) == 774030080);
  CHECK(unpadded(gpuperf::GptOptions::gpt2_1558m()) == 1557611200);
  CHECK(gpuperf::parameter_count(gpuperf::LlamaOptions::llama_1b()) == 1235814400);
  CHECK(gpuperf::parameter_count(gpuperf::LlamaOptions::llama_3b()) == 3212749824);
}

TEST_CASE("built models hold exactly the parameters their shape counts", "[models][lm]") {
  gpuperf::Gpt gpt2(gpuperf::GptOptions::gpt2_124m());
  CHECK(numel(*gpt2) == 124475904);  // the padded vocabulary nanoGPT and llm.c train
  gpuperf::Gpt gpt(tiny_gpt());
  CHECK(numel(*gpt) == gpuperf::parameter_count(tiny_gpt()));
  for (const bool tied : {true, false}) {
    for (const std::int64_t kv : {1, 2, 4}) {
      gpuperf::Llama llama(tiny_llama(kv, tied));
      INFO("kv_heads " << kv << ", tied " << tied);
      CHECK(numel(*llama) == gpuperf::parameter_count(tiny_llama(kv, tied)));
    }
  }
}

TEST_CASE("transformer options refuse impossible shapes, naming the field", "[models][lm]") {
  gpuperf::GptOptions gpt = tiny_gpt();
  gpt.heads = 3;
  CHECK_THROWS_WITH(gpuperf::Gpt(gpt),
                    Catch::Contains("GptOptions::heads") && Catch::Contains("a divisor of width"));
  gpuperf::LlamaOptions llama = tiny_llama(3, true);
  CHECK_THROWS_WITH(gpuperf::Llama(llama), Catch::Contains("LlamaOptions::kv_heads"));
  llama = tiny_llama(2, true);
  llama.rope_theta = 0;
  CHECK_THROWS_WITH(gpuperf::Llama(llama), Catch::Contains("LlamaOptions::rope_theta"));
}

TEST_CASE("language models map token ids to next-token logits and refuse other input",
          "[models][lm]") {
  torch::manual_seed(0);
  gpuperf::Gpt gpt(tiny_gpt());
  gpuperf::Llama llama(tiny_llama(2, true));
  const torch::Tensor ids = torch::randint(0, 53, {3, 7}, torch::kLong);
  CHECK(gpt(ids).sizes() == torch::IntArrayRef({3, 7, 61}));
  CHECK(llama(ids).sizes() == torch::IntArrayRef({3, 7, 53}));
  CHECK_THROWS_WITH(gpt(torch::zeros({2, 17}, torch::kLong)),
                    Catch::Contains("17 tokens does not fit the context of 16"));
  CHECK_THROWS_WITH(llama(torch::zeros({2, 4})), Catch::Contains("int64"));
}

TEST_CASE("a position's logits never depend on later tokens (causal attention)", "[models][lm]") {
  torch::manual_seed(1);
  gpuperf::Gpt gpt(tiny_gpt());
  gpuperf::Llama llama(tiny_llama(2, false));
  torch::NoGradGuard no_grad;
  const torch::Tensor ids = torch::randint(0, 53, {2, 10}, torch::kLong);
  torch::Tensor changed = ids.clone();
  changed.select(1, 6).fill_(52);  // only position 6 differs
  for (int m = 0; m < 2; ++m) {
    const torch::Tensor a = m == 0 ? gpt(ids) : llama(ids);
    const torch::Tensor b = m == 0 ? gpt(changed) : llama(changed);
    INFO((m == 0 ? "gpt" : "llama"));
    CHECK(torch::equal(a.narrow(1, 0, 6), b.narrow(1, 0, 6)));
    CHECK_FALSE(torch::allclose(a.narrow(1, 6, 4), b.narrow(1, 6, 4)));
  }
}

TEST_CASE("causal attention matches softmax(q k^T / sqrt(d)) v over earlier positions in fp64",
          "[models][lm]") {
  torch::manual_seed(2);
  const auto options = torch::TensorOptions().dtype(torch::kFloat);
  const torch::Tensor q = torch::randn({2, 3, 9, 8}, options);
  const torch::Tensor k = torch::randn({2, 3, 9, 8}, options);
  const torch::Tensor v = torch::randn({2, 3, 9, 8}, options);
  const torch::Tensor got = gpuperf::causal_attention(q, k, v).to(torch::kDouble);
  const double error = (got - reference_attention(q, k, v)).abs().max().item<double>();
  CHECK(error < 1e-5);
  CHECK_FALSE(gpuperf::attention_kernel(q, k, v).empty());
}

TEST_CASE("grouped-query attention shares each key/value head among its group of query heads",
          "[models][lm]") {
  torch::manual_seed(3);
  const torch::Tensor q = torch::randn({2, 6, 9, 8});
  const torch::Tensor k = torch::randn({2, 2, 9, 8});
  const torch::Tensor v = torch::randn({2, 2, 9, 8});
  const torch::Tensor got = gpuperf::causal_attention(q, k, v).to(torch::kDouble);
  CHECK((got - reference_attention(q, k, v)).abs().max().item<double>() < 1e-5);
  CHECK_THROWS_WITH(
      gpuperf::causal_attention(q, torch::randn({2, 4, 9, 8}), torch::randn({2, 4, 9, 8})),
      Catch::Contains("6 query heads cannot share 4 key"));
}

TEST_CASE("rotary embeddings make attention scores depend on relative position only",
          "[models][lm]") {
  gpuperf::Llama llama(tiny_llama(4, true));
  torch::manual_seed(3);
  // One query and one key vector, placed at positions (i, j) and (i + 5, j + 5) of a sequence.
  const torch::Tensor q = torch::randn({4});
  const torch::Tensor k = torch::randn({4});
  auto rotated = [&](const torch::Tensor& x, std::int64_t position) {
    torch::Tensor seq = torch::zeros({1, 1, 16, 4});
    seq[0][0][position] = x;
    const std::int64_t half = 2;
    const torch::Tensor rotate_half =
        torch::cat({-seq.narrow(-1, half, half), seq.narrow(-1, 0, half)}, -1);
    return (seq * llama->rope_cos + rotate_half * llama->rope_sin)[0][0][position];
  };
  // The same layout the model uses: its cos/sin tables, head width 4 (width 16 over 4 heads).
  const double near = torch::dot(rotated(q, 7), rotated(k, 2)).item<double>();
  const double shifted = torch::dot(rotated(q, 12), rotated(k, 7)).item<double>();
  const double other = torch::dot(rotated(q, 9), rotated(k, 2)).item<double>();
  CHECK(near == Approx(shifted).epsilon(1e-5));
  CHECK(std::abs(near - other) > 1e-4);
}

TEST_CASE("GPT and Llama gradients in fp32 match the same models in fp64", "[models][lm]") {
  for (int m = 0; m < 2; ++m) {
    INFO((m == 0 ? "gpt" : "llama"));
    torch::manual_seed(4);
    std::shared_ptr<torch::nn::Module> f32 =
        m == 0 ? std::static_pointer_cast<torch::nn::Module>(gpuperf::Gpt(tiny_gpt()).ptr())
               : std::static_pointer_cast<torch::nn::Module>(
                     gpuperf::Llama(tiny_llama(2, true)).ptr());
    torch::manual_seed(4);
    std::shared_ptr<torch::nn::Module> f64 =
        m == 0 ? std::static_pointer_cast<torch::nn::Module>(gpuperf::Gpt(tiny_gpt()).ptr())
               : std::static_pointer_cast<torch::nn::Module>(
                     gpuperf::Llama(tiny_llama(2, true)).ptr());
    f64->to(torch::kDouble);
    const torch::Tensor ids = torch::randint(0, 53, {2, 12}, torch::kLong);
    const torch::Tensor next = torch::randint(0, 53, {2, 12}, torch::kLong);
    const auto loss_fn = gpuperf::language_model_loss();
    auto forward = [&](torch::nn::Module& model) {
      if (auto* g = dynamic_cast<gpuperf::GptImpl*>(&model)) return g->forward(ids);
      return dynamic_cast<gpuperf::LlamaImpl&>(model).forward(ids);
    };
    loss_fn(forward(*f32), next).backward();
    loss_fn(forward(*f64), next).backward();
    const auto p32 = f32->named_parameters();
    const auto p64 = f64->named_parameters();
    REQUIRE(p32.size() == p64.size());
    double worst = 0;
    for (const auto& p : p32) {
      const torch::Tensor g64 = p64[p.key()].grad();
      const torch::Tensor g32 = p.value().grad().to(torch::kDouble);
      const double scale = std::max(g64.abs().max().item<double>(), 1e-12);
      worst = std::max(worst, (g32 - g64).abs().max().item<double>() / scale);
    }
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("timed GEMM algorithms are a process-wide switch that applies to a GPU's 16-bit products",
          "[models][lm]") {
  CHECK_FALSE(gpuperf::timed_gemm_algorithms());  // the default
  CHECK(gpuperf::TrainingRun{}.timed_gemm_algorithms == gpuperf::timed_gemm_algorithms());
  {
    const gpuperf::TimedGemmAlgorithmsScope scope(true);
    CHECK(gpuperf::timed_gemm_algorithms());
    CHECK_FALSE(gpuperf::timed_gemm_algorithms_apply(torch::Device(torch::kCPU), torch::kBFloat16));
    if (torch::cuda::is_available()) {
      CHECK(gpuperf::timed_gemm_algorithms_apply(torch::Device(torch::kCUDA, 0), torch::kHalf));
      CHECK_FALSE(
          gpuperf::timed_gemm_algorithms_apply(torch::Device(torch::kCUDA, 0), torch::kFloat));
    }
  }
  CHECK_FALSE(gpuperf::timed_gemm_algorithms());  // back as it was
}

TEST_CASE("the registry knows GPT-2 and Llama-style models as language models", "[models][lm]") {
  const gpuperf::ModelInfo gpt2 = gpuperf::ModelRegistry::global().get("gpt2");
  CHECK(gpt2.task == gpuperf::ModelTask::kLanguageModel);
  CHECK(gpt2.input_shape == std::vector<std::int64_t>{1024});
  CHECK(gpt2.default_num_classes == 50304);
  CHECK(gpt2.layers == 12);
  CHECK(gpt2.width == 768);
  CHECK(gpt2.description.find("124M") != std::string::npos);
  const gpuperf::ModelInfo llama = gpuperf::ModelRegistry::global().get("llama-3b");
  CHECK(llama.task == gpuperf::ModelTask::kLanguageModel);
  CHECK(llama.layers == 28);
  // One sample is up to the whole context, as the description says.
  CHECK(llama.input_shape == std::vector<std::int64_t>{8192});
  CHECK(llama.description.find("context 8192") != std::string::npos);
  CHECK(llama.description.find("3213M") != std::string::npos);
  CHECK(gpuperf::ModelRegistry::global().get("resnet50").task ==
        gpuperf::ModelTask::kImageClassification);
}

TEST_CASE("token files give shifted windows of their tokens and refuse what they cannot hold",
          "[train][lm]") {
  gpuperf::TokenBatchOptions options;
  options.batch_size = 3;
  options.sequence = 8;
  options.vocabulary = 1000;
  // nanoGPT's layout: tokens 0, 1, 2, ... as raw uint16.
  std::vector<std::uint16_t> tokens(500);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i);
  const std::string raw = temp_path("tokens.bin");
  write_bytes(raw, tokens.data(), tokens.size() * 2);
  gpuperf::TokenFileBatches batches(raw, options);
  CHECK(batches.tokens() == 500);
  const gpuperf::Batch b = batches.next();
  REQUIRE(b.input.sizes() == torch::IntArrayRef({3, 8}));
  CHECK(torch::equal(b.target, b.input + 1));  // each target is the next token
  CHECK(torch::equal(b.input.narrow(1, 1, 7), b.input.narrow(1, 0, 7) + 1));  // a window
  // The same seed, the same windows.
  CHECK(torch::equal(gpuperf::TokenFileBatches(raw, options).next().input, b.input));

  // llm.c's layout: 256 int32 of header (magic, version 1, token count), then the tokens.
  std::vector<std::int32_t> header(256, 0);
  header[0] = 20240520;
  header[1] = 1;
  header[2] = 100;
  std::string bytes(reinterpret_cast<const char*>(header.data()), 1024);
  bytes.append(reinterpret_cast<const char*>(tokens.data()), 200);
  const std::string llmc = temp_path("llmc.bin");
  write_bytes(llmc, bytes.data(), bytes.size());
  gpuperf::TokenFileBatches llmc_batches(llmc, options);
  CHECK(llmc_batches.tokens() == 100);
  CHECK(llmc_batches.next().input.max().item<std::int64_t>() < 100);

  header[1] = 2;
  write_bytes(llmc, header.data(), 1024);
  CHECK_THROWS_WITH(gpuperf::TokenFileBatches(llmc, options), Catch::Contains("version 2"));
  write_bytes(raw, tokens.data(), 16);  // 8 tokens: fewer than a window of 9
  CHECK_THROWS_WITH(gpuperf::TokenFileBatches(raw, options),
                    Catch::Contains("holds 8 tokens") && Catch::Contains(raw));
  write_bytes(raw, tokens.data(), 0);
  CHECK_THROWS_WITH(gpuperf::TokenFileBatches(raw, options), Catch::Contains("is empty"));
  write_bytes(raw, tokens.data(), 401);  // 200 tokens and half of one: cut short
  CHECK_THROWS_WITH(gpuperf::TokenFileBatches(raw, options),
                    Catch::Contains("holds 401 bytes") && Catch::Contains("uint16"));
  options.vocabulary = 50;  // tokens up to 499 do not fit
  write_bytes(raw, tokens.data(), tokens.size() * 2);
  // Refused before the first batch, the first bad token named with its position.
  CHECK_THROWS_WITH(gpuperf::TokenFileBatches(raw, options),
                    Catch::Contains("token 50 at position 50") &&
                        Catch::Contains("outside the vocabulary of 50"));
  // A bad token anywhere in a long file (past the scan's first chunks, and as the last token)
  // is found before anything runs, not when a window happens to cover it.
  std::vector<std::uint16_t> long_file((std::size_t{3} << 20) + 7, 7);
  for (const std::size_t at : {std::size_t{2'500'001}, long_file.size() - 1}) {
    long_file[at] = 50;
    write_bytes(raw, long_file.data(), long_file.size() * 2);
    CHECK_THROWS_WITH(gpuperf::TokenFileBatches(raw, options),
                      Catch::Contains("at position " + std::to_string(at)));
    long_file[at] = 49;
  }
  write_bytes(raw, long_file.data(), long_file.size() * 2);
  CHECK(gpuperf::TokenFileBatches(raw, options).tokens() ==
        static_cast<std::int64_t>(long_file.size()));
  CHECK_THROWS_AS(gpuperf::TokenFileBatches(temp_path("no_such_file.bin"), options),
                  gpuperf::IoError);
  std::remove(raw.c_str());
  std::remove(llmc.c_str());
}

TEST_CASE("a language-model training run records tokens/s and the 6N + 6LCT FLOP count",
          "[train][lm]") {
  gpuperf::GptOptions shape = tiny_gpt();
  gpuperf::ModelInfo info{"test-tiny-gpt",
                          "a tiny GPT",
                          {shape.context},
                          shape.vocabulary,
                          [shape](std::int64_t vocabulary) {
                            gpuperf::GptOptions o = shape;
                            o.vocabulary = vocabulary;
                            return torch::nn::AnyModule(gpuperf::Gpt(o));
                          }};
  info.task = gpuperf::ModelTask::kLanguageModel;
  info.layers = shape.layers;
  info.width = shape.width;
  gpuperf::ModelRegistry::global().add(info);

  gpuperf::TrainingRun run;
  run.device = "cpu";
  run.model = "test-tiny-gpt";
  run.batch_size = 4;
  run.precision = gpuperf::Precision::kFp32;
  run.optimizer = gpuperf::OptimizerKind::kAdamW;
  run.learning_rate = 1e-2;
  run.adam_beta2 = 0.95;
  run.measure.warmup = 2;
  run.measure.steps_per_window = 4;
  run.measure.windows = 2;
  run.threads = 1;
  run.quiet = true;
  run.sequence_length = 17;
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Contains("TrainingRun::sequence_length: must be >= 0 and <= 16"));
  run.sequence_length = 12;
  // Timed GEMM algorithms asked for: on the CPU they do not apply (the record says nothing of
  // them), and the process-wide setting is back as it was after the run.
  run.timed_gemm_algorithms = true;
  const gpuperf::RunRecord record = gpuperf::run_training(run);
  CHECK_FALSE(gpuperf::timed_gemm_algorithms());
  CHECK(record.config.kernel_fusion.find("GEMMs") == std::string::npos);
  CHECK(record.config.input_shape == std::vector<std::int64_t>{12});
  CHECK(record.config.num_classes == shape.vocabulary);
  CHECK(record.config.data_source == "synthetic tokens");
  CHECK(record.metrics.at("tokens_per_second") == Approx(12 * record.throughput.median));
  const double n = static_cast<double>(gpuperf::parameter_count(shape));
  CHECK(record.metrics.at("model_parameters") == n);
  CHECK(record.metrics.at("model_flops_per_sample") == Approx(12 * (6 * n + 6 * 2 * 16 * 12)));
  CHECK(record.config.kernel_fusion.rfind("attention: ", 0) == 0);
  CHECK(record.final_loss < record.first_loss);  // one batch of random tokens, memorised
  // Each window's last loss, the last window's the run's final loss.
  REQUIRE(record.window_losses.size() == 2);
  CHECK(std::isfinite(record.window_losses[0]));
  CHECK(record.window_losses[1] == record.final_loss);
  for (const std::string& warning : record.warnings) {
    INFO(warning);
    CHECK(warning.find("loss") == std::string::npos);
  }

  // A folder of images for a language model: refused, pointing at the token file.
  run.data = "images";
  CHECK_THROWS_WITH(gpuperf::run_training(run),
                    Catch::Contains("TrainingRun::data images: feeds 3x224x224 images") &&
                        Catch::Contains("(a language model's tokens: TrainingRun::token_file)"));
  run.data.clear();

  gpuperf::TrainingRun images;
  images.sequence_length = 12;
  CHECK_THROWS_WITH(gpuperf::run_training(images),
                    Catch::Contains("TrainingRun::sequence_length 12: applies to language models"));
  images.sequence_length = 0;
  images.token_file = "tokens.bin";
  CHECK_THROWS_WITH(gpuperf::run_training(images), Catch::Contains("TrainingRun::token_file"));
}

TEST_CASE("the transformer FLOP count is llm.c's and PaLM's 6N + 6LCT per token", "[specs][lm]") {
  // GPT-2 124M (padded vocabulary) at sequence 1024: 6 x 124,475,904 + 6 x 12 x 768 x 1024.
  CHECK(gpuperf::transformer_training_flops_per_token(124475904, 12, 768, 1024) == 803478528.0);
}

TEST_CASE(
    "GPT-2 trains on the GPU in bf16 with the whole step in a CUDA graph and flash "
    "attention",
    "[train][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  gpuperf::TrainingRun run;
  run.device = "cuda";
  run.model = "gpt2";
  run.batch_size = 4;
  run.sequence_length = 256;
  run.precision = gpuperf::Precision::kBf16;
  run.optimizer = gpuperf::OptimizerKind::kAdamW;
  run.learning_rate = 6e-4;
  run.adam_beta2 = 0.95;
  run.weight_decay = 0.1;
  run.measure.warmup = 6;
  run.measure.steps_per_window = 5;
  run.measure.windows = 2;
  run.quiet = true;
  const gpuperf::RunRecord record = gpuperf::run_training(run);
  CHECK(record.config.graph_mode == "cuda-graph");
  CHECK(record.config.optimizer_impl == "fused");
  // A fused kernel, not the math path: LibTorch 2.11 picks cuDNN's on an H200, flash elsewhere.
  // The optimizer: gpuperf's Adam kernel, writing the bf16 block weights the forward pass reads,
  // its update beside backward (TrainingRun::optimizer_in_backward's default); the products'
  // algorithms timed where TrainingRun::timed_gemm_algorithms' default says.
  const std::string rest =
      std::string("; cross-entropy: gpuperf") +
      (gpuperf::TrainingRun{}.timed_gemm_algorithms ? "; GEMMs: timed algorithms" : "") +
      "; optimizer: gpuperf's Adam writing the 16-bit weights, beside backward";
  const std::set<std::string> fused{"attention: flash" + rest, "attention: cudnn" + rest,
                                    "attention: efficient" + rest};
  CHECK(fused.count(record.config.kernel_fusion) == 1);
  CHECK(std::isfinite(record.final_loss));
  CHECK(record.final_loss < record.first_loss);
  // The captured step's loss read between windows: the last window's is the final loss.
  REQUIRE(record.window_losses.size() == 2);
  CHECK(std::isfinite(record.window_losses[0]));
  CHECK(record.window_losses[1] == record.final_loss);
  CHECK(record.metrics.at("tokens_per_second") > 0);
  CHECK(record.metrics.count("fraction_of_datasheet_peak") == 1);

  // SDPA's flash kernel in bf16 against the fp64 reference.
  torch::manual_seed(5);
  const auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  const torch::Tensor q = torch::randn({2, 4, 64, 64}, bf16);
  const torch::Tensor k = torch::randn({2, 4, 64, 64}, bf16);
  const torch::Tensor v = torch::randn({2, 4, 64, 64}, bf16);
  CHECK(gpuperf::attention_kernel(q, k, v) != "math");
  const torch::Tensor got = gpuperf::causal_attention(q, k, v).to(torch::kDouble).cpu();
  CHECK((got - reference_attention(q, k, v)).abs().max().item<double>() < 0.05);
}

TEST_CASE("grouped-query attention on CUDA matches fp64 values and gradients, heads unwidened",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(12);
  const auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  // Llama 3.2 1B's grouping (32 query heads, 8 key/value heads) and head width.
  const torch::Tensor q = torch::randn({2, 32, 128, 64}, bf16).requires_grad_();
  const torch::Tensor k = torch::randn({2, 8, 128, 64}, bf16).requires_grad_();
  const torch::Tensor v = torch::randn({2, 8, 128, 64}, bf16).requires_grad_();
  INFO("kernel " << gpuperf::attention_kernel(q, k, v) << ", widened "
                 << gpuperf::causal_attention_widens(q, k));
  CHECK(gpuperf::attention_kernel(q, k, v) != "math");
  const torch::Tensor grad = torch::randn({2, 32, 128, 64}, bf16);
  const torch::Tensor got = gpuperf::causal_attention(q, k, v);
  got.backward(grad);
  auto f64 = [](const torch::Tensor& t) {
    return t.detach().to(torch::kDouble).cpu().requires_grad_(true);
  };
  const torch::Tensor q64 = f64(q);
  const torch::Tensor k64 = f64(k);
  const torch::Tensor v64 = f64(v);
  const torch::Tensor ref = reference_attention(q64, k64, v64);
  ref.backward(grad.to(torch::kDouble).cpu());
  // bf16 inputs and outputs: within a few bf16 ulps of the largest magnitude.
  auto relative = [](const torch::Tensor& a, const torch::Tensor& b) {
    return (a.to(torch::kDouble).cpu() - b).abs().max().item<double>() /
           b.abs().max().item<double>();
  };
  CHECK(relative(got, ref) < 0.02);
  CHECK(relative(q.grad(), q64.grad()) < 0.02);
  CHECK(relative(k.grad(), k64.grad()) < 0.02);
  CHECK(relative(v.grad(), v64.grad()) < 0.02);
}

TEST_CASE("the fused cross-entropy matches the fp64 loss and gradient, any vocabulary width",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(6);
  // Where the gradient is written: with the loss for the incoming gradient expected (1 without a
  // scope, then rescaled in backward when 3 arrives; 3, as it arrives), or in the backward pass.
  const std::vector<std::pair<const char*, std::optional<std::optional<double>>>> modes = {
      {"forward, rescaled", std::nullopt},
      {"forward, as expected", std::optional<double>(3.0)},
      {"backward", std::optional<double>()}};
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    // GPT-2's rows (16-bit: one block stages a row on an H100/H200), Llama 3's (16-bit: a cluster
    // of blocks stages each row on sm_90 and later), and rows no kernel stages.
    for (const std::int64_t vocab : {50304, 128256, 1001, 7}) {
      for (const auto& [mode, expected] : modes) {
        INFO("dtype " << c10::toString(dtype) << ", vocabulary " << vocab << ", gradient in "
                      << mode);
        const auto on = torch::TensorOptions().device(torch::kCUDA);
        const torch::Tensor logits =
            (torch::randn({3, 37, vocab}, on) * 4).to(dtype).requires_grad_(true);
        const torch::Tensor targets = torch::randint(0, vocab, {3, 37}, on.dtype(torch::kLong));
        REQUIRE(gpuperf::fused_cross_entropy_applies(logits));
        std::optional<gpuperf::LossGradientScope> scope;
        if (expected.has_value()) scope.emplace(*expected);
        const torch::Tensor loss = gpuperf::next_token_loss(logits, targets);
        scope.reset();
        (loss * 3).backward();  // an incoming gradient other than 1 reaches the kernels
        const torch::Tensor x64 = logits.detach().to(torch::kDouble).requires_grad_(true);
        const torch::Tensor ref =
            torch::nn::functional::cross_entropy(x64.reshape({-1, vocab}), targets.reshape({-1}));
        (ref * 3).backward();
        CHECK(std::abs(loss.item<double>() - ref.item<double>()) < 1e-4 * ref.item<double>());
        // The gradient is rounded to the logits' dtype once (twice when rescaled): within that
        // dtype's ulp of the largest entries.
        // float32: the log-sum-exp's own rounding (an ulp of a sum near 10 is 1e-6) moves every
        // probability by as much.
        const double tolerance =
            dtype == torch::kFloat ? 4e-6 : (dtype == torch::kHalf ? 1e-3 : 8e-3);
        const torch::Tensor g = logits.grad().to(torch::kDouble);
        const double scale = x64.grad().abs().max().item<double>();
        CHECK((g - x64.grad()).abs().max().item<double>() <= tolerance * scale);
      }
    }
  }
  // A retained graph goes back through the loss once, unless its gradient waits for backward.
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  const torch::Tensor logits = torch::randn({40, 1001}, on).to(torch::kBFloat16).requires_grad_();
  const torch::Tensor targets = torch::randint(0, 1001, {40}, on.dtype(torch::kLong));
  const torch::Tensor loss = gpuperf::next_token_loss(logits, targets);
  loss.backward({}, /*retain_graph=*/true);
  CHECK_THROWS_WITH(loss.backward(), Catch::Contains("LossGradientScope(std::nullopt)"));
  logits.mutable_grad() = torch::Tensor();
  torch::Tensor retained;
  {
    const gpuperf::LossGradientScope in_backward(std::nullopt);
    retained = gpuperf::next_token_loss(logits, targets);
  }
  retained.backward({}, /*retain_graph=*/true);
  (retained * 5).backward();
  const torch::Tensor x64 = logits.detach().to(torch::kDouble).requires_grad_(true);
  (torch::nn::functional::cross_entropy(x64, targets) * 6).backward();
  CHECK((logits.grad().to(torch::kDouble) - x64.grad()).abs().max().item<double>() <=
        2e-2 * x64.grad().abs().max().item<double>());
  // Without a gradient to compute, none is written, and the loss is the same.
  {
    torch::NoGradGuard no_grad;
    CHECK(gpuperf::next_token_loss(logits, targets).item<double>() ==
          Approx(loss.item<double>()).epsilon(1e-6));
  }
  CHECK_THROWS_WITH(gpuperf::LossGradientScope(0.0), Catch::Contains("LossGradientScope"));
  // A target outside the vocabulary gives a NaN loss, never a read out of bounds.
  const torch::Tensor zeros = torch::zeros({2, 5}, on);
  const torch::Tensor bad = torch::tensor({1, 9}, torch::kLong).cuda();
  CHECK(std::isnan(gpuperf::next_token_loss(zeros, bad).item<double>()));
  CHECK_THROWS_WITH(gpuperf::next_token_loss(zeros, torch::zeros({3}, torch::kLong).cuda()),
                    Catch::Contains("disagree"));
}

TEST_CASE("next_token_loss is ATen's cross-entropy on the CPU", "[models][lm]") {
  torch::manual_seed(7);
  const torch::Tensor logits = torch::randn({2, 5, 11});
  const torch::Tensor targets = torch::randint(0, 11, {2, 5}, torch::kLong);
  CHECK_FALSE(gpuperf::fused_cross_entropy_applies(logits));
  CHECK(gpuperf::next_token_loss(logits, targets).item<double>() ==
        torch::nn::functional::cross_entropy(logits.reshape({-1, 11}), targets.reshape({-1}))
            .item<double>());
  CHECK_THROWS_WITH(gpuperf::next_token_loss(logits, targets.narrow(1, 0, 4)),
                    Catch::Contains("disagree"));
  // The incoming gradient it is told to expect: finite and > 0, or none.
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    INFO("expected " << bad);
    CHECK_THROWS_WITH(gpuperf::LossGradientScope(bad), Catch::Contains("LossGradientScope"));
  }
  const gpuperf::LossGradientScope none(std::nullopt);
  const gpuperf::LossGradientScope half(0.5);
  CHECK(gpuperf::next_token_loss(logits, targets).item<double>() ==
        torch::nn::functional::cross_entropy(logits.reshape({-1, 11}), targets.reshape({-1}))
            .item<double>());
}

namespace {

// residual_layer_norm() (residual_rms_norm() with `rms`) on CUDA under `dtype` (autocast to it;
// float32: autocast off) against the same sum and norm in float64: values and the gradients of
// x, branch, weight and bias (and, with `branch_bias`, of the branch's bias added to it).
void check_residual_norm(torch::ScalarType dtype, std::vector<std::int64_t> shape, bool with_branch,
                         bool rms, bool branch_bias = false) {
  const std::int64_t width = shape.back();
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  const torch::Tensor x = (torch::randn(shape, on) * 3 + 1).requires_grad_(true);
  const torch::Tensor branch =
      with_branch ? torch::randn(shape, on).to(dtype).requires_grad_(true) : torch::Tensor();
  const torch::Tensor weight = (torch::randn({width}, on) + 1).requires_grad_(true);
  const torch::Tensor bias = torch::randn({width}, on).requires_grad_(true);
  const torch::Tensor added =
      branch_bias ? torch::randn({width}, on).requires_grad_(true) : torch::Tensor();
  // Random incoming gradients for both outputs: the residual stream's and the normalized one's.
  const torch::Tensor grad_sum = torch::randn(shape, on);
  const torch::Tensor grad_normalized = torch::randn(shape, on).to(dtype).to(torch::kFloat);
  gpuperf::ResidualNorm got;
  {
    gpuperf::AutocastGuard autocast(torch::kCUDA, dtype == torch::kFloat ? torch::kBFloat16 : dtype,
                                    dtype != torch::kFloat);
    if (rms) {
      REQUIRE(gpuperf::fused_residual_rms_norm_applies(x, branch, weight));
      got = gpuperf::residual_rms_norm(x, branch, weight, 1e-5);
    } else {
      REQUIRE(gpuperf::fused_residual_layer_norm_applies(x, branch, weight, bias, added));
      got = gpuperf::residual_layer_norm(x, branch, weight, bias, 1e-5, added);
    }
  }
  REQUIRE(got.normalized.scalar_type() == dtype);
  REQUIRE(got.sum.scalar_type() == torch::kFloat);
  const torch::Tensor loss = (got.normalized.to(torch::kFloat) * grad_normalized).sum() +
                             (with_branch ? (got.sum * grad_sum).sum() : torch::zeros({}, on));
  loss.backward();

  auto f64 = [](const torch::Tensor& t) {
    return t.detach().to(torch::kDouble).requires_grad_(true);
  };
  const torch::Tensor x64 = f64(x);
  const torch::Tensor b64 = with_branch ? f64(branch) : torch::Tensor();
  const torch::Tensor w64 = f64(weight);
  const torch::Tensor c64 = f64(bias);
  const torch::Tensor a64 = branch_bias ? f64(added) : torch::Tensor();
  const torch::Tensor h64 = with_branch ? x64 + (branch_bias ? b64 + a64 : b64) : x64;
  const torch::Tensor y64 = rms ? h64 * torch::rsqrt(h64.pow(2).mean(-1, true) + 1e-5) * w64
                                : torch::layer_norm(h64, {width}, w64, c64, 1e-5);
  const torch::Tensor ref =
      (y64 * grad_normalized.to(torch::kDouble)).sum() +
      (with_branch ? (h64 * grad_sum.to(torch::kDouble)).sum() : torch::zeros({}, x64.options()));
  ref.backward();

  // Largest difference relative to the reference's largest magnitude.
  auto relative = [](const torch::Tensor& a, const torch::Tensor& b) {
    return (a.to(torch::kDouble) - b).abs().max().item<double>() / b.abs().max().item<double>();
  };
  // The output and the branch's gradient are rounded to `dtype` once (half an ulp: 2^-9 in bf16,
  // 2^-12 in fp16); everything kept in float32 within float32 sums' error.
  const double rounded = dtype == torch::kBFloat16 ? 4e-3 : (dtype == torch::kHalf ? 5e-4 : 1e-5);
  CHECK(relative(got.sum, h64) < 1e-6);
  CHECK(relative(got.normalized, y64) < rounded);
  CHECK(relative(x.grad(), x64.grad()) < 1e-5);
  if (with_branch) CHECK(relative(branch.grad(), b64.grad()) < rounded);
  // The branch bias's gradient sums the branch's gradient as rounded to `dtype` (what the layer's
  // own bias gradient would sum): each term within one rounding.
  if (branch_bias) CHECK(relative(added.grad(), a64.grad()) < rounded);
  CHECK(relative(weight.grad(), w64.grad()) < 1e-5);
  if (rms) {
    CHECK_FALSE(bias.grad().defined());
  } else {
    CHECK(relative(bias.grad(), c64.grad()) < 1e-5);
  }
}

}  // namespace

TEST_CASE("the fused residual add + LayerNorm or RMSNorm matches fp64 values and gradients",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(8);
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    for (const bool with_branch : {true, false}) {
      // GPT-2's widths, the widest the kernels take (Llama 1B's), narrow ones, a width for each of
      // the backward pass's row splits (1 to 8 warps a row), and more rows than its blocks take at
      // once (each block takes rows in turns, the last turn partly idle).
      const std::vector<std::vector<std::int64_t>> shapes{
          {3, 37, 768}, {2, 5, 1600}, {2, 3, 2048}, {7, 12},        {4, 600, 64},   {9, 200},
          {33, 320},    {5, 7, 1024}, {6, 1280},    {2, 1500, 768}, {3, 700, 2048}, {5, 1000, 64}};
      for (const auto& shape : shapes) {
        for (const bool rms : {false, true}) {
          INFO("dtype " << c10::toString(dtype) << ", branch " << with_branch << ", width "
                        << shape.back() << ", rows " << shape[0] * (shape.size() > 2 ? shape[1] : 1)
                        << ", RMSNorm " << rms);
          check_residual_norm(dtype, shape, with_branch, rms);
        }
        if (with_branch) {
          INFO("dtype " << c10::toString(dtype) << ", width " << shape.back()
                        << ", with a branch bias");
          check_residual_norm(dtype, shape, true, false, true);
        }
      }
    }
  }
}

TEST_CASE("residual_layer_norm is ATen's add and layer_norm where its kernels do not apply",
          "[models][lm]") {
  torch::manual_seed(9);
  const torch::Tensor x = torch::randn({2, 3, 8});
  const torch::Tensor branch = torch::randn({2, 3, 8});
  const torch::Tensor weight = torch::randn({8});
  const torch::Tensor bias = torch::randn({8});
  CHECK_FALSE(gpuperf::fused_residual_layer_norm_applies(x, branch, weight, bias));
  const gpuperf::ResidualNorm got = gpuperf::residual_layer_norm(x, branch, weight, bias, 1e-5);
  CHECK(torch::equal(got.sum, x + branch));
  CHECK(torch::equal(got.normalized, torch::layer_norm(x + branch, {8}, weight, bias, 1e-5)));
  const torch::Tensor added = torch::randn({8});
  const gpuperf::ResidualNorm biased =
      gpuperf::residual_layer_norm(x, branch, weight, bias, 1e-5, added);
  CHECK(torch::equal(biased.sum, x + (branch + added)));
  CHECK(torch::equal(biased.normalized,
                     torch::layer_norm(x + (branch + added), {8}, weight, bias, 1e-5)));
  CHECK_THROWS_WITH(gpuperf::residual_layer_norm(x, {}, weight, bias, 1e-5, added),
                    Catch::Matchers::Contains("branch bias without a branch"));
  const gpuperf::ResidualNorm alone = gpuperf::residual_layer_norm(x, {}, weight, bias, 1e-5);
  CHECK(alone.sum.is_same(x));
  CHECK(torch::equal(alone.normalized, torch::layer_norm(x, {8}, weight, bias, 1e-5)));
  CHECK_FALSE(gpuperf::fused_residual_rms_norm_applies(x, branch, weight));
  const gpuperf::ResidualNorm rms = gpuperf::residual_rms_norm(x, branch, weight, 1e-5);
  const torch::Tensor h = (x + branch).to(torch::kDouble);
  CHECK(torch::allclose(
      rms.normalized.to(torch::kDouble),
      h * torch::rsqrt(h.pow(2).mean(-1, true) + 1e-5) * weight.to(torch::kDouble), 1e-6, 1e-6));
}

TEST_CASE("GPT-2 and Llama blocks run with their add pending are the blocks run whole",
          "[models][lm]") {
  torch::manual_seed(10);
  const torch::Tensor x = torch::randn({2, 5, 16});
  const torch::Tensor pending = torch::randn({2, 5, 16});
  gpuperf::GptBlock gpt(tiny_gpt());
  const auto [h, mlp] = gpt->forward_pending(x, pending);
  CHECK(torch::allclose(h + mlp.value(), gpt->forward(x + pending), 1e-6, 1e-6));
  gpuperf::Llama llama(tiny_llama(2, true));
  auto* block = llama->blocks->ptr(0)->as<gpuperf::LlamaBlockImpl>();
  const auto [hl, ffn] = block->forward_pending(x, pending, llama->rope_cos, llama->rope_sin);
  CHECK(torch::allclose(hl + ffn, block->forward(x + pending, llama->rope_cos, llama->rope_sin),
                        1e-6, 1e-6));
}

namespace {

// Largest difference relative to the reference's largest magnitude.
double relative_error(const torch::Tensor& got, const torch::Tensor& reference) {
  return (got.detach().to(torch::kDouble) - reference).abs().max().item<double>() /
         reference.abs().max().item<double>();
}

torch::Tensor f64(const torch::Tensor& t) {
  return t.detach().to(torch::kDouble).requires_grad_(true);
}

// One rounding to `dtype` (half an ulp: 2^-9 in bf16, 2^-12 in fp16) relative to the largest
// magnitude, or float32 arithmetic's error.
double rounded_once(torch::ScalarType dtype) {
  return dtype == torch::kBFloat16 ? 4e-3 : (dtype == torch::kHalf ? 5e-4 : 1e-5);
}

torch::Tensor rotate_half64(const torch::Tensor& x) {
  const std::int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

// Rotary tables as the Llama model builds them: position t, frequency 10000^(-2i / width).
std::pair<torch::Tensor, torch::Tensor> rotary_tables(std::int64_t positions, std::int64_t width,
                                                      const torch::TensorOptions& on) {
  const torch::Tensor i = torch::arange(0, width, 2, torch::kDouble);
  const torch::Tensor angles = torch::outer(torch::arange(positions, torch::kDouble),
                                            torch::pow(10000.0, -i / static_cast<double>(width)))
                                   .repeat({1, 2});
  return {angles.cos().to(torch::kFloat).to(on.device()),
          angles.sin().to(torch::kFloat).to(on.device())};
}

// linear_activation() on CUDA under `dtype` (autocast to it; float32: autocast off) against
// activation(x W^T + b) in float64 from the same rounded inputs: values and the gradients of x,
// weight and bias.
void check_linear(torch::ScalarType dtype, std::vector<std::int64_t> shape, std::int64_t out,
                  gpuperf::Activation activation, bool with_bias = true) {
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  const std::int64_t in = shape.back();
  const torch::Tensor x = torch::randn(shape, on).to(dtype).requires_grad_(true);
  const torch::Tensor weight =
      (torch::randn({out, in}, on) / std::sqrt(static_cast<double>(in))).requires_grad_(true);
  const torch::Tensor bias =
      with_bias ? torch::randn({out}, on).requires_grad_(true) : torch::Tensor();
  std::vector<std::int64_t> out_shape = shape;
  out_shape.back() = out;
  const torch::Tensor grad_y = torch::randn(out_shape, on).to(dtype).to(torch::kFloat);
  torch::Tensor y;
  {
    gpuperf::AutocastGuard autocast(torch::kCUDA, dtype == torch::kFloat ? torch::kBFloat16 : dtype,
                                    dtype != torch::kFloat);
    REQUIRE(gpuperf::fused_linear_applies(x, weight, bias));
    y = gpuperf::linear_activation(x, weight, bias, activation);
  }
  REQUIRE(y.scalar_type() == dtype);
  (y.to(torch::kFloat) * grad_y).sum().backward();
  REQUIRE(weight.grad().scalar_type() == torch::kFloat);
  if (with_bias) REQUIRE(bias.grad().scalar_type() == torch::kFloat);

  // The reference reads what the GEMM reads: x and the weight and bias rounded to `dtype`.
  const torch::Tensor x64 = f64(x);
  const torch::Tensor w64 = weight.detach().to(dtype).to(torch::kDouble).requires_grad_(true);
  const torch::Tensor b64 =
      with_bias ? bias.detach().to(dtype).to(torch::kDouble).requires_grad_(true) : torch::Tensor();
  torch::Tensor y64 = torch::linear(x64, w64, b64);
  if (activation == gpuperf::Activation::kGeluTanh) y64 = torch::gelu(y64, "tanh");
  (y64 * grad_y.to(torch::kDouble)).sum().backward();
  // A 16-bit GEMM reads rounded inputs and rounds its output once; its gradients read the rounded
  // output gradient: a few roundings of `dtype`.
  const double tolerance = dtype == torch::kFloat ? 1e-5 : 4 * rounded_once(dtype);
  CHECK(relative_error(y, y64) < tolerance);
  CHECK(relative_error(x.grad(), x64.grad()) < tolerance);
  CHECK(relative_error(weight.grad(), w64.grad()) < tolerance);
  if (with_bias) CHECK(relative_error(bias.grad(), b64.grad()) < tolerance);
}

// A model (moved to CUDA) on random ids [2, context]: its logits under bf16 autocast from
// `logits_of(ids, true)` (its forward: every block weight cast in one kernel) and
// `logits_of(ids, false)` (the same blocks run one by one, each layer casting its own), with the
// gradients of a fixed weighting of them: the casts round alike, so the
// logits agree bit for bit; every parameter's gradient is float32 and agrees to a few bf16
// roundings (the attention's backward pass adds in no fixed order).
void check_one_kernel_casts(
    torch::nn::Module& model, std::int64_t vocabulary, std::int64_t context,
    const std::function<torch::Tensor(const torch::Tensor& ids, bool whole)>& logits_of) {
  model.to(torch::kCUDA);
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const torch::Tensor ids = torch::randint(0, vocabulary, {2, context}, cuda.dtype(torch::kLong));
  const torch::Tensor weighting = torch::randn({2, context, vocabulary}, cuda);
  const auto run = [&](bool whole) {
    model.zero_grad();
    torch::Tensor logits;
    {
      gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
      logits = logits_of(ids, whole);
    }
    REQUIRE(logits.sizes() == weighting.sizes());
    (logits.to(torch::kFloat) * weighting).sum().backward();
    std::vector<torch::Tensor> out{logits.detach().clone()};
    for (const auto& p : model.parameters()) out.push_back(p.grad().clone());
    return out;
  };
  const std::vector<torch::Tensor> per_layer = run(false);
  const std::vector<torch::Tensor> at_once = run(true);
  REQUIRE(at_once.size() == per_layer.size());
  CHECK(torch::equal(at_once[0], per_layer[0]));
  for (std::size_t i = 1; i < at_once.size(); ++i) {
    INFO("parameter " << i - 1);
    REQUIRE(at_once[i].scalar_type() == torch::kFloat);
    REQUIRE(per_layer[i].abs().max().item<double>() > 0);
    CHECK(relative_error(at_once[i], per_layer[i].to(torch::kDouble)) < 2e-2);
  }
}

}  // namespace

// `reference` (its parameters drawn) in float64 on the CPU against copies on CUDA, in float32
// and under bf16 autocast: the logits and every parameter's gradient. `applies(copy)` checks, on
// CUDA, that gpuperf's kernels under test run.
template <typename Model, typename Applies>
void check_cuda_against_fp64(Model& reference, const Applies& applies) {
  const auto& o = reference->options();
  reference->to(torch::kDouble);
  const torch::Tensor ids = torch::randint(0, o.vocabulary, {3, o.context}, torch::kLong);
  const torch::Tensor next = torch::randint(0, o.vocabulary, {3, o.context}, torch::kLong);
  const auto loss_fn = gpuperf::language_model_loss();
  const torch::Tensor logits64 = reference->forward(ids);
  reference->zero_grad(/*set_to_none=*/true);  // a second check's reference holds its own only
  loss_fn(logits64, next).backward();
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    INFO("dtype " << c10::toString(dtype));
    Model model(o);
    {
      torch::NoGradGuard no_grad;
      const auto from = reference->named_parameters();
      for (auto& p : model->named_parameters()) p.value().copy_(from[p.key()].to(torch::kFloat));
    }
    model->to(torch::kCUDA);
    applies(model);
    torch::Tensor logits;
    {
      gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, dtype != torch::kFloat);
      logits = model->forward(ids.to(torch::kCUDA));
      loss_fn(logits, next.to(torch::kCUDA)).backward();
    }
    const double bound = dtype == torch::kFloat ? 1e-4 : 5e-2;
    CHECK(relative_error(logits.cpu(), logits64.detach()) < bound);
    const auto ours = model->named_parameters();
    for (const auto& p : reference->named_parameters()) {
      INFO("parameter " << p.key());
      const torch::Tensor g64 = p.value().grad();
      REQUIRE(g64.abs().max().item<double>() > 0);
      CHECK(relative_error(ours[p.key()].grad().cpu(), g64) < bound);
    }
  }
}

TEST_CASE("GPT-2 on CUDA, its projections' biases added by the LayerNorms, matches fp64",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // Every bias and LayerNorm parameter drawn (the model's own init zeroes the biases, which would
  // hide a bias added twice or a bias gradient not summed), then the logits and every parameter's
  // gradient on CUDA (float32 and bf16 autocast) against the same model in float64 on the CPU.
  gpuperf::GptOptions o = tiny_gpt();
  o.width = 64;
  o.heads = 4;
  o.vocabulary = 64;
  torch::manual_seed(12);
  gpuperf::Gpt reference(o);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : reference->named_parameters()) {
      if (p.value().dim() != 1) continue;
      // LayerNorm weights around 1, biases around 0.
      const bool scale =
          p.key().find("ln") != std::string::npos && p.key().find("weight") != std::string::npos;
      p.value().copy_(torch::randn_like(p.value()) * 0.5 + (scale ? 1.0 : 0.0));
    }
  }
  check_cuda_against_fp64(reference, [](gpuperf::Gpt& gpt) {
    // The LayerNorms after the projections run gpuperf's kernels, so the biases move to them.
    const gpuperf::GptOptions& o = gpt->options();
    const auto* block = gpt->blocks->ptr(0)->as<gpuperf::GptBlockImpl>();
    REQUIRE(gpuperf::fused_residual_layer_norm_applies(
        torch::zeros({3, o.context, o.width}, torch::kCUDA), {}, block->ln_2->weight,
        block->ln_2->bias));
  });
}

TEST_CASE("linear_activation's GELU is the tanh form GPT-2 uses, not the erf form",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // Zero weights: the output is GELU of the bias, which spans [2, 3], where the two forms differ
  // by 3.7e-4 on average and fp16's spacing is 2e-3; over the 513 distinct fp16 values there the
  // rounding's mean is 2e-5, so the mean difference from each form tells them apart.
  const auto half = torch::TensorOptions().device(torch::kCUDA, 0).dtype(torch::kHalf);
  const torch::Tensor x = torch::randn({64, 64}, half);
  const torch::Tensor w = torch::zeros({4096, 64}, half);
  const torch::Tensor b = torch::linspace(2.0, 3.0, 4096, torch::kDouble).to(half);
  REQUIRE(gpuperf::fused_linear_applies(x, w, b));
  const torch::Tensor y =
      gpuperf::linear_activation(x, w, b, gpuperf::Activation::kGeluTanh).cpu().to(torch::kDouble);
  const torch::Tensor b64 = b.cpu().to(torch::kDouble).expand_as(y);
  const double from_tanh = (y - torch::gelu(b64, "tanh")).mean().item<double>();
  const double from_erf = (y - torch::gelu(b64)).mean().item<double>();
  INFO("mean difference from GELU-tanh " << from_tanh << ", from GELU-erf " << from_erf);
  CHECK(std::abs(from_tanh) < 1e-4);
  CHECK(std::abs(from_tanh) < std::abs(from_erf) / 3);
}

TEST_CASE("linear_activation's GELU product reads inputs aligned to 16 bytes only, and again",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // cuBLASLt's heuristic assumes 256-byte operands unless told; the algorithm is kept per shape
  // and alignment. Rows of 40 bf16 (80 bytes) from the second row on: 16-byte aligned x, then the
  // same shape 256-byte aligned, each twice (the second call takes the kept algorithm).
  torch::manual_seed(5);
  const auto bf16 = torch::TensorOptions().device(torch::kCUDA, 0).dtype(torch::kBFloat16);
  const torch::Tensor buffer = torch::randn({301, 40}, bf16);
  const torch::Tensor w = (torch::randn({264, 40}, bf16) / std::sqrt(40.0)).contiguous();
  const torch::Tensor b = torch::randn({264}, bf16);
  for (const torch::Tensor& x : {buffer.narrow(0, 1, 300), buffer.narrow(0, 0, 300).clone()}) {
    INFO("x at byte " << reinterpret_cast<std::uintptr_t>(x.data_ptr()) % 256 << " mod 256");
    REQUIRE(gpuperf::fused_linear_applies(x, w, b));
    const torch::Tensor y64 = torch::gelu(
        torch::linear(x.to(torch::kDouble), w.to(torch::kDouble), b.to(torch::kDouble)), "tanh");
    for (int call = 0; call < 2; ++call) {
      const torch::Tensor y = gpuperf::linear_activation(x, w, b, gpuperf::Activation::kGeluTanh);
      CHECK(relative_error(y, y64) < 4 * rounded_once(torch::kBFloat16));
    }
  }
}

TEST_CASE("Gpt's linear weights cast in one kernel give the per-layer casts' logits and gradients",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(3);
  gpuperf::GptOptions o = tiny_gpt();
  o.width = 64;
  o.vocabulary = 64;
  gpuperf::Gpt gpt(o);
  check_one_kernel_casts(*gpt, o.vocabulary, o.context, [&](const torch::Tensor& ids, bool whole) {
    if (whole) return gpt->forward(ids);
    torch::Tensor x = gpt->wte(ids) + gpt->wpe(torch::arange(o.context, ids.options()));
    gpuperf::PendingBranch pending;
    for (const auto& block : *gpt->blocks) {
      std::tie(x, pending) = block->as<gpuperf::GptBlockImpl>()->forward_pending(x, pending);
    }
    const gpuperf::ResidualNorm last =
        gpuperf::residual_layer_norm(x, pending.output, gpt->ln_f->weight, gpt->ln_f->bias,
                                     gpt->ln_f->options.eps(), pending.bias);
    return gpuperf::linear_activation(last.normalized, gpt->wte->weight, {},
                                      gpuperf::Activation::kNone);
  });
}

TEST_CASE("Llama's weights cast in one kernel give the per-layer casts' logits and gradients",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(4);
  gpuperf::LlamaOptions o = tiny_llama(/*kv_heads=*/2, /*tied=*/true);
  o.width = 64;
  o.hidden = 128;
  o.vocabulary = 64;
  gpuperf::Llama llama(o);
  check_one_kernel_casts(
      *llama, o.vocabulary, o.context, [&](const torch::Tensor& ids, bool whole) {
        if (whole) return llama->forward(ids);
        torch::Tensor x = llama->tok_embeddings(ids);
        torch::Tensor pending;
        for (const auto& block : *llama->blocks) {
          std::tie(x, pending) = block->as<gpuperf::LlamaBlockImpl>()->forward_pending(
              x, pending, llama->rope_cos, llama->rope_sin);
        }
        const torch::Tensor last =
            gpuperf::residual_rms_norm(x, pending, llama->norm, o.norm_eps).normalized;
        return gpuperf::linear_activation(last, llama->tok_embeddings->weight, {},
                                          gpuperf::Activation::kNone);
      });
}

TEST_CASE("linear_activation's kernels, with a bias (and GELU) and without, match fp64",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(11);
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    for (const auto activation : {gpuperf::Activation::kNone, gpuperf::Activation::kGeluTanh}) {
      // GPT-2's projection widths; a width past one block of columns but not a multiple of it;
      // more rows than the kernel's parts x 8.
      for (const auto& [shape, out] :
           std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>>{
               {{3, 37, 768}, 2304}, {{2, 50, 768}, 3072}, {{2, 9, 64}, 264}, {{4, 600, 64}, 40}}) {
        INFO("dtype " << c10::toString(dtype) << ", GELU "
                      << (activation == gpuperf::Activation::kGeluTanh) << ", in " << shape.back()
                      << ", out " << out);
        check_linear(dtype, shape, out, activation);
        // Without a bias (Llama's projections, the tied output layers), by ATen's products and
        // by cuBLASLt's with timed algorithms.
        check_linear(dtype, shape, out, activation, /*with_bias=*/false);
        const gpuperf::TimedGemmAlgorithmsScope timed(true);
        check_linear(dtype, shape, out, activation);
        check_linear(dtype, shape, out, activation, /*with_bias=*/false);
      }
    }
  }
}

TEST_CASE("a product's timed algorithm is kept for its shape: the same inputs, the same bits",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(12);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  // Shapes whose products cuBLASLt's heuristic offers several algorithms for.
  const torch::Tensor x = torch::randn({4, 256, 512}, on).to(torch::kBFloat16);
  const torch::Tensor w = torch::randn({1024, 512}, on) / std::sqrt(512.0);
  const torch::Tensor y64 = torch::linear(f64(x), w.to(torch::kBFloat16).to(torch::kDouble));
  for (const bool timed : {true, false}) {
    INFO("timed " << timed);
    const gpuperf::TimedGemmAlgorithmsScope scope(timed);
    CHECK(gpuperf::timed_gemm_algorithms() == timed);
    CHECK(gpuperf::timed_gemm_algorithms_apply(x.device(), torch::kBFloat16) == timed);
    gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
    const torch::Tensor first = gpuperf::linear_activation(x, w, {}, gpuperf::Activation::kNone);
    const torch::Tensor again = gpuperf::linear_activation(x, w, {}, gpuperf::Activation::kNone);
    CHECK(torch::equal(first, again));
    CHECK(relative_error(first, y64) < 1e-2);
  }
}

TEST_CASE("attention_heads' q, k, v and the projection's gradients match fp64",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(13);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    // GPT-2's 12 heads of 64; heads of 8; more rows than the kernel's parts x 8 (2,048); the
    // incoming gradients contiguous, and in [batch, sequence, heads, head width] order (the
    // projection's own layout, strided as heads).
    for (const auto& [batch, sequence, heads, head_width] :
         std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>>{
             {2, 37, 12, 64}, {3, 5, 4, 8}, {4, 600, 2, 16}}) {
      for (const bool strided : {false, true}) {
        const std::int64_t width = heads * head_width;
        INFO("dtype " << c10::toString(dtype) << ", " << batch << " x " << sequence << ", " << heads
                      << " heads of " << head_width << ", strided " << strided);
        const torch::Tensor x =
            torch::randn({batch, sequence, width}, on).to(dtype).requires_grad_(true);
        const torch::Tensor weight =
            (torch::randn({3 * width, width}, on) / std::sqrt(static_cast<double>(width)))
                .requires_grad_(true);
        const torch::Tensor bias = torch::randn({3 * width}, on).requires_grad_(true);
        std::vector<torch::Tensor> incoming;
        for (int i = 0; i < 3; ++i) {
          incoming.push_back(
              strided ? torch::randn({batch, sequence, heads, head_width}, on).transpose(1, 2)
                      : torch::randn({batch, heads, sequence, head_width}, on));
        }
        std::vector<torch::Tensor> qkv;
        {
          gpuperf::AutocastGuard autocast(torch::kCUDA,
                                          dtype == torch::kFloat ? torch::kBFloat16 : dtype,
                                          dtype != torch::kFloat);
          REQUIRE(gpuperf::fused_attention_heads_applies(x, weight, bias, heads));
          qkv = gpuperf::attention_heads(x, weight, bias, heads);
        }
        REQUIRE(qkv.size() == 3);
        torch::Tensor loss = torch::zeros({}, on);
        for (int i = 0; i < 3; ++i) {
          REQUIRE(qkv[i].sizes() == incoming[i].sizes());
          REQUIRE(qkv[i].scalar_type() == dtype);
          // The incoming gradient rounded to `dtype` (what reaches the projection's gradient).
          incoming[i] = incoming[i].to(dtype).to(torch::kFloat);
          loss = loss + (qkv[i].to(torch::kFloat) * incoming[i]).sum();
        }
        loss.backward();
        REQUIRE(bias.grad().scalar_type() == torch::kFloat);
        // The reference reads what the GEMM reads: x and the weight and bias rounded to `dtype`.
        const torch::Tensor x64 = f64(x);
        const torch::Tensor w64 = weight.detach().to(dtype).to(torch::kDouble).requires_grad_(true);
        const torch::Tensor b64 = bias.detach().to(dtype).to(torch::kDouble).requires_grad_(true);
        const std::vector<torch::Tensor> parts = torch::linear(x64, w64, b64).split(width, -1);
        torch::Tensor ref = torch::zeros({}, x64.options());
        for (int i = 0; i < 3; ++i) {
          const torch::Tensor h =
              parts[i].view({batch, sequence, heads, head_width}).transpose(1, 2);
          CHECK(relative_error(qkv[i], h) <
                (dtype == torch::kFloat ? 1e-5 : 4 * rounded_once(dtype)));
          ref = ref + (h * incoming[i].to(torch::kDouble)).sum();
        }
        ref.backward();
        const double tolerance = dtype == torch::kFloat ? 1e-5 : 4 * rounded_once(dtype);
        CHECK(relative_error(x.grad(), x64.grad()) < tolerance);
        CHECK(relative_error(weight.grad(), w64.grad()) < tolerance);
        // The bias gradient sums the incoming gradients as `dtype` holds them: float32 sums.
        CHECK(relative_error(bias.grad(), b64.grad()) < 1e-5);
      }
    }
  }
}

// The optimizer's 16-bit copies of `weights` (WeightCopies: back to back in one allocation).
std::vector<torch::Tensor> kept_copies(const std::vector<torch::Tensor>& weights) {
  gpuperf::WeightCopies copies(torch::kBFloat16);
  std::vector<torch::Tensor> kept = copies.get(weights, torch::kBFloat16);
  REQUIRE(kept.size() == weights.size());
  return kept;
}

TEST_CASE("rotary_heads' q, k, v and the three weights' gradients match fp64",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(14);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  // Llama's attention input at a small scale: grouped-query (k and v two heads of four).
  const std::int64_t batch = 3;
  const std::int64_t sequence = 37;
  const std::int64_t width = 128;
  const std::int64_t heads = 4;
  const std::int64_t kv_heads = 2;
  const std::int64_t head = 32;
  torch::Tensor cos;
  torch::Tensor sin;
  std::tie(cos, sin) = rotary_tables(sequence + 3, head, on);
  const std::vector<torch::Tensor> weights{
      torch::randn({heads * head, width}, on).requires_grad_(),
      torch::randn({kv_heads * head, width}, on).requires_grad_(),
      torch::randn({kv_heads * head, width}, on).requires_grad_()};
  const std::vector<std::int64_t> out_heads{heads, kv_heads, kv_heads};
  // bf16 under autocast (as the Llama block runs), float32 without.
  for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
    INFO("dtype " << c10::toString(dtype));
    const bool autocast_on = dtype != torch::kFloat;
    for (const auto& w : weights) w.mutable_grad() = torch::Tensor();
    const torch::Tensor x = torch::randn({batch, sequence, width}, on).to(dtype).requires_grad_();
    std::vector<torch::Tensor> grads;
    for (const std::int64_t h : out_heads) {
      grads.push_back(torch::randn({batch, h, sequence, head}, on));
    }
    std::vector<torch::Tensor> got;
    {
      gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, autocast_on);
      REQUIRE(gpuperf::fused_rotary_heads_applies(x, weights[0], weights[1], weights[2], cos, sin,
                                                  heads, kv_heads));
      got = gpuperf::rotary_heads(x, weights[0], weights[1], weights[2], cos, sin, heads, kv_heads);
    }
    REQUIRE(got.size() == 3);
    // Views of the one product (q and k rotated in place): attention keeps no more than three
    // tensors of their own would hold.
    CHECK(got[1].storage().is_alias_of(got[0].storage()));
    CHECK(got[2].storage().is_alias_of(got[0].storage()));
    torch::Tensor loss = torch::zeros({}, on);
    for (std::size_t i = 0; i < 3; ++i) loss = loss + (got[i].to(torch::kFloat) * grads[i]).sum();
    loss.backward();
    const torch::Tensor x64 = f64(x);
    const torch::Tensor c64 = cos.narrow(0, 0, sequence).to(torch::kDouble);
    const torch::Tensor s64 = sin.narrow(0, 0, sequence).to(torch::kDouble);
    torch::Tensor ref = torch::zeros({}, x64.options());
    std::vector<torch::Tensor> w64;
    for (std::size_t i = 0; i < 3; ++i) {
      INFO("output " << i);
      // The product reads the weight as autocast casts it.
      w64.push_back(f64(weights[i].to(dtype)));
      torch::Tensor y = torch::matmul(x64, w64[i].t())
                            .view({batch, sequence, out_heads[i], head})
                            .transpose(1, 2);
      if (i < 2) y = y * c64 + rotate_half64(y) * s64;  // q and k rotated, v not
      REQUIRE(got[i].sizes() == y.sizes());
      CHECK(relative_error(got[i], y.detach()) < (autocast_on ? 1e-2 : 1e-5));
      ref = ref + (y * grads[i].to(torch::kDouble)).sum();
    }
    ref.backward();
    CHECK(relative_error(x.grad(), x64.grad()) < (autocast_on ? 1e-2 : 1e-5));
    for (std::size_t i = 0; i < 3; ++i) {
      INFO("weight " << i);
      REQUIRE(weights[i].grad().scalar_type() == torch::kFloat);
      CHECK(relative_error(weights[i].grad(), w64[i].grad()) < (autocast_on ? 1e-2 : 1e-5));
    }
  }
  // 16-bit copies back to back (the joined weight a view of them) give what copies anywhere
  // (joined in a copy) give, to the bit.
  const torch::Tensor x = torch::randn({batch, sequence, width}, on).to(torch::kBFloat16);
  const std::vector<torch::Tensor> kept = kept_copies(weights);
  std::vector<torch::Tensor> apart;
  for (const auto& w : weights) apart.push_back(w.detach().to(torch::kBFloat16));
  gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
  const auto run = [&](const std::vector<torch::Tensor>& casts) {
    return gpuperf::rotary_heads(x, weights[0], weights[1], weights[2], cos, sin, heads, kv_heads,
                                 casts);
  };
  const auto from_kept = run(kept);
  const auto from_apart = run(apart);
  for (std::size_t i = 0; i < 3; ++i) CHECK(torch::equal(from_kept[i], from_apart[i]));
  // The one-kernel cast of contiguous weights lays them back to back as well.
  const std::vector<torch::Tensor> cast = gpuperf::cast_weights(weights, torch::kBFloat16);
  CHECK(cast[2].storage().is_alias_of(cast[0].storage()));
  CHECK(cast[2].storage_offset() ==
        cast[0].storage_offset() + weights[0].numel() + weights[1].numel());
}

TEST_CASE("swiglu_linear's product and both weights' gradients match fp64", "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(15);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  const std::int64_t width = 64;
  const std::int64_t hidden = 136;
  const torch::Tensor w1 = (torch::randn({hidden, width}, on) * 0.3).requires_grad_();
  const torch::Tensor w3 = (torch::randn({hidden, width}, on) * 0.3).requires_grad_();
  for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
    INFO("dtype " << c10::toString(dtype));
    const bool autocast_on = dtype != torch::kFloat;
    w1.mutable_grad() = torch::Tensor();
    w3.mutable_grad() = torch::Tensor();
    const torch::Tensor x = torch::randn({3, 29, width}, on).to(dtype).requires_grad_();
    const torch::Tensor grad = torch::randn({3, 29, hidden}, on);
    torch::Tensor got;
    {
      gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, autocast_on);
      REQUIRE(gpuperf::fused_swiglu_linear_applies(x, w1, w3));
      got = gpuperf::swiglu_linear(x, w1, w3);
    }
    REQUIRE(got.sizes() == grad.sizes());
    (got.to(torch::kFloat) * grad).sum().backward();
    const torch::Tensor x64 = f64(x);
    const torch::Tensor w1_64 = f64(w1.to(dtype));
    const torch::Tensor w3_64 = f64(w3.to(dtype));
    const torch::Tensor y64 =
        torch::silu(torch::matmul(x64, w1_64.t())) * torch::matmul(x64, w3_64.t());
    (y64 * grad.to(torch::kDouble)).sum().backward();
    const double bound = autocast_on ? 1e-2 : 1e-5;
    CHECK(relative_error(got, y64.detach()) < bound);
    CHECK(relative_error(x.grad(), x64.grad()) < bound);
    REQUIRE(w1.grad().scalar_type() == torch::kFloat);
    CHECK(relative_error(w1.grad(), w1_64.grad()) < bound);
    CHECK(relative_error(w3.grad(), w3_64.grad()) < bound);
  }
  const torch::Tensor x = torch::randn({3, 29, width}, on).to(torch::kBFloat16);
  gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
  CHECK(torch::equal(
      gpuperf::swiglu_linear(x, w1, w3, kept_copies({w1, w3})),
      gpuperf::swiglu_linear(
          x, w1, w3, {w1.detach().to(torch::kBFloat16), w3.detach().to(torch::kBFloat16)})));
}

TEST_CASE("Llama on CUDA, its projections joined, matches fp64", "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // Every norm weight drawn, then the logits and every parameter's gradient on CUDA (float32 and
  // bf16 autocast) against the same model in float64 on the CPU.
  gpuperf::LlamaOptions o = tiny_llama(/*kv_heads=*/2, /*tied=*/true);
  o.width = 64;
  o.hidden = 128;
  o.vocabulary = 64;
  torch::manual_seed(16);
  gpuperf::Llama reference(o);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : reference->named_parameters()) {
      if (p.value().dim() == 1) p.value().copy_(torch::randn_like(p.value()) * 0.3 + 1.0);
    }
  }
  // By ATen's products (the default), then by cuBLASLt's with timed algorithms.
  for (const bool timed : {false, true}) {
    INFO("timed GEMM algorithms " << timed);
    const gpuperf::TimedGemmAlgorithmsScope scope(timed);
    check_cuda_against_fp64(reference, [](gpuperf::Llama& llama) {
      const gpuperf::LlamaOptions& o = llama->options();
      const auto* block = llama->blocks->ptr(0)->as<gpuperf::LlamaBlockImpl>();
      const torch::Tensor probe = torch::zeros({3, o.context, o.width}, torch::kCUDA);
      REQUIRE(gpuperf::fused_rotary_heads_applies(probe, block->wq->weight, block->wk->weight,
                                                  block->wv->weight, llama->rope_cos,
                                                  llama->rope_sin, o.heads, o.kv_heads));
      REQUIRE(gpuperf::fused_swiglu_linear_applies(probe, block->w1->weight, block->w3->weight));
    });
  }
}

TEST_CASE("a tied embedding's weight gradient is both uses' in fp64, the same on every run",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(13);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  const torch::Tensor weight = torch::randn({1000, 64}, on).requires_grad_();
  // Every token many times over: the repeated rows add in the sorted order.
  const torch::Tensor ids = torch::randint(0, 50, {4, 300}, on.dtype(torch::kLong));
  const torch::Tensor x = torch::randn({4, 300, 64}, on);
  const torch::Tensor row_grad = torch::randn({4, 300, 64}, on);
  const torch::Tensor logit_grad = torch::randn({4, 300, 1000}, on);
  auto run = [&](bool output_layer) {
    weight.mutable_grad() = torch::Tensor();
    const auto [rows, output_weight] = gpuperf::tied_embedding(ids, weight);
    torch::Tensor loss = (rows * row_grad).sum();
    if (output_layer) loss = loss + (torch::matmul(x, output_weight.t()) * logit_grad).sum();
    loss.backward();
    return weight.grad().clone();
  };
  for (const bool output_layer : {true, false}) {
    INFO("output layer " << output_layer);
    const torch::Tensor got = run(output_layer);
    CHECK(torch::equal(got, run(output_layer)));
    const torch::Tensor w64 = weight.detach().to(torch::kDouble).cpu().requires_grad_();
    torch::Tensor ref =
        (torch::embedding(w64, ids.cpu()) * row_grad.to(torch::kDouble).cpu()).sum();
    if (output_layer) {
      ref = ref + (torch::matmul(x.to(torch::kDouble).cpu(), w64.t()) *
                   logit_grad.to(torch::kDouble).cpu())
                      .sum();
    }
    ref.backward();
    // float32 products (TF32 where the process allows it): far tighter than a missing use.
    CHECK((got.to(torch::kDouble).cpu() - w64.grad()).abs().max().item<double>() <
          1e-2 * w64.grad().abs().max().item<double>());
  }
  // The output layer's gradient is added into in place only where nothing else holds it: here a
  // hook keeps it, and it stays as the hook saw it.
  {
    weight.mutable_grad() = torch::Tensor();
    const auto [rows, output_weight] = gpuperf::tied_embedding(ids, weight);
    torch::Tensor kept;
    output_weight.register_hook([&kept](const torch::Tensor& g) { kept = g; });
    ((rows * row_grad).sum() + (torch::matmul(x, output_weight.t()) * logit_grad).sum()).backward();
    REQUIRE(kept.defined());
    const torch::Tensor head_only = torch::matmul(logit_grad.reshape({-1, 1000}).t(),
                                                  x.reshape({-1, 64}));  // the output layer's alone
    CHECK((kept - head_only).abs().max().item<double>() <
          1e-2 * head_only.abs().max().item<double>());
    CHECK((weight.grad() - kept).abs().max().item<double>() > 0);
  }
  // Without a gradient to take, the lookup and the weight as they are.
  torch::NoGradGuard no_grad;
  const auto [rows, output_weight] = gpuperf::tied_embedding(ids, weight);
  CHECK(output_weight.is_same(weight));
  CHECK(torch::equal(rows, torch::embedding(weight, ids)));
}

TEST_CASE("Llama trains with its update beside backward as with it after, checkpointed too",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // Two blocks of about 15M elements: backward hands gradients over in several launches' worth.
  gpuperf::LlamaOptions o = tiny_llama(/*kv_heads=*/2, /*tied=*/true);
  o.width = 1024;
  o.hidden = 4096;
  o.vocabulary = 512;
  o.context = 64;
  const auto cuda_ids = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
  torch::manual_seed(30);
  const torch::Tensor ids = torch::randint(0, 512, {4, 64}, cuda_ids);
  const torch::Tensor next = torch::randint(0, 512, {4, 64}, cuda_ids);
  for (const bool checkpointed : {false, true}) {
    for (const bool graph : {false, true}) {
      INFO("checkpointed " << checkpointed << ", CUDA graph " << graph);
      std::vector<std::vector<double>> losses;
      std::vector<std::vector<torch::Tensor>> weights;
      for (const bool beside : {false, false, true}) {  // after twice: the spread of two runs
        torch::manual_seed(31);
        gpuperf::Llama llama(o);
        if (checkpointed) REQUIRE(gpuperf::set_activation_checkpointing(*llama, true));
        gpuperf::TrainStepOptions options;
        options.precision = gpuperf::Precision::kBf16;
        options.optimizer = gpuperf::OptimizerKind::kAdamW;
        options.learning_rate = 1e-3;
        options.weight_decay = 0.1;
        options.fused_optimizer = true;
        options.cuda_graph = graph;
        options.optimizer_in_backward = beside;
        gpuperf::TrainStep step(torch::nn::AnyModule(llama), torch::kCUDA, options,
                                gpuperf::language_model_loss());
        losses.emplace_back();
        for (int s = 0; s < 7; ++s) {
          const gpuperf::StepResult r = step(ids, next);
          losses.back().push_back(r.loss.item<double>());
          CHECK(step.updated_in_backward() == beside);
        }
        if (graph) CHECK(step.graph_captured());
        weights.emplace_back();
        for (const auto& p : step.module().parameters())
          weights.back().push_back(p.detach().clone());
      }
      // Another launch order of the same arithmetic: as far from the first run as the second
      // run is (zero where backward's kernels add in the same order on every run).
      double spread = 0;
      double apart = 0;
      for (std::size_t i = 0; i < losses[0].size(); ++i) {
        CHECK(std::isfinite(losses[2][i]));
        spread = std::max(spread, std::abs(losses[1][i] - losses[0][i]));
        apart = std::max(apart, std::abs(losses[2][i] - losses[0][i]));
      }
      double weight_spread = 0;
      double weight_apart = 0;
      for (std::size_t i = 0; i < weights[0].size(); ++i) {
        weight_spread =
            std::max(weight_spread, (weights[1][i] - weights[0][i]).abs().max().item<double>());
        weight_apart =
            std::max(weight_apart, (weights[2][i] - weights[0][i]).abs().max().item<double>());
      }
      INFO("loss spread " << spread << ", apart " << apart << "; weights " << weight_spread << ", "
                          << weight_apart);
      CHECK(losses[2].back() < losses[2].front());
      CHECK(apart <= 2 * spread + 1e-6);
      CHECK(weight_apart <= 2 * weight_spread + 1e-7);
    }
  }
}

TEST_CASE("the optimizer's 16-bit weight copies are the casts a forward pass would make",
          "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  for (const bool llama : {false, true}) {
    INFO((llama ? "Llama" : "GPT-2"));
    torch::manual_seed(12);
    std::shared_ptr<torch::nn::Module> model =
        llama
            ? std::static_pointer_cast<torch::nn::Module>(gpuperf::Llama(tiny_llama(2, true)).ptr())
            : std::static_pointer_cast<torch::nn::Module>(gpuperf::Gpt(tiny_gpt()).ptr());
    model->to(torch::kCUDA);
    const auto forward = [&](const torch::Tensor& ids) {
      return llama ? static_cast<gpuperf::LlamaImpl&>(*model).forward(ids)
                   : static_cast<gpuperf::GptImpl&>(*model).forward(ids);
    };
    gpuperf::FusedOptimizerOptions options(gpuperf::OptimizerKind::kAdamW, 1e-2);
    options.weight_decay = 0.1;
    gpuperf::FusedOptimizer optimizer(model->parameters(), options);
    REQUIRE(optimizer.writes_copies());
    gpuperf::WeightCopies copies(torch::kBFloat16);
    optimizer.write_copies(&copies);
    const auto cuda_ids = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    const torch::Tensor ids = torch::randint(0, 50, {3, 9}, cuda_ids);
    const torch::Tensor targets = torch::randint(0, 50, {3, 9}, cuda_ids);
    for (int step = 0; step < 3; ++step) {
      const gpuperf::WeightCopies::Scope scope(&copies);
      gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, true);
      gpuperf::next_token_loss(forward(ids), targets).backward();
      optimizer.step();
      optimizer.zero_grad();
    }
    // The block weights have copies, each the parameter rounded to bf16 (the kernel wrote them
    // with the update: no cast since the first forward pass).
    std::int64_t with_copy = 0;
    for (const auto& p : model->parameters()) {
      const torch::Tensor c = copies.copy_of(p);
      if (!c.defined()) continue;
      ++with_copy;
      CHECK(torch::equal(c, p.detach().to(torch::kBFloat16)));
    }
    CHECK(with_copy == static_cast<std::int64_t>(copies.size()));
    CHECK(with_copy >= 8);  // at least the two blocks' four projections each
    // A forward pass reading the copies gives the logits one casting the weights gives; so does
    // one after a weight changed outside the optimizer (cast again first).
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {
        const torch::NoGradGuard no_grad;
        for (auto& p : model->parameters()) {
          if (copies.copy_of(p).defined()) {
            p.mul_(0.5);
            break;
          }
        }
      }
      gpuperf::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, true);
      torch::Tensor kept;
      {
        const gpuperf::WeightCopies::Scope scope(&copies);
        kept = forward(ids);
      }
      CHECK(torch::equal(kept, forward(ids)));
    }
  }
}

TEST_CASE("swiglu's kernels match fp64 values and gradients", "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(12);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    for (const auto& shape : std::vector<std::vector<std::int64_t>>{{3, 37, 512}, {1, 8}}) {
      INFO("dtype " << c10::toString(dtype) << ", elements " << shape.back());
      const torch::Tensor a = (torch::randn(shape, on) * 3).to(dtype).requires_grad_(true);
      const torch::Tensor b = torch::randn(shape, on).to(dtype).requires_grad_(true);
      const torch::Tensor grad = torch::randn(shape, on).to(dtype).to(torch::kFloat);
      REQUIRE(gpuperf::fused_swiglu_applies(a, b));
      const torch::Tensor y = gpuperf::swiglu(a, b);
      REQUIRE(y.scalar_type() == dtype);
      (y.to(torch::kFloat) * grad).sum().backward();
      const torch::Tensor a64 = f64(a);
      const torch::Tensor b64 = f64(b);
      const torch::Tensor y64 = torch::silu(a64) * b64;
      (y64 * grad.to(torch::kDouble)).sum().backward();
      CHECK(relative_error(y, y64) < rounded_once(dtype));
      CHECK(relative_error(a.grad(), a64.grad()) < rounded_once(dtype));
      CHECK(relative_error(b.grad(), b64.grad()) < rounded_once(dtype));
    }
  }
}

TEST_CASE("rotary_embedding's kernels match fp64 values and gradients", "[models][lm][gpu]") {
  GPUPERF_REQUIRE_GPU();
  torch::manual_seed(13);
  const auto on = torch::TensorOptions().device(torch::kCUDA);
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    // As the Llama block passes q and k (split heads of a projection), and a contiguous tensor.
    for (const bool projection_layout : {true, false}) {
      for (const std::int64_t width : {64, 8}) {
        INFO("dtype " << c10::toString(dtype) << ", projection layout " << projection_layout
                      << ", head width " << width);
        const std::int64_t batch = 2;
        const std::int64_t heads = 3;
        const std::int64_t sequence = 11;
        const torch::Tensor leaf =
            projection_layout
                ? torch::randn({batch, sequence, heads * width}, on).to(dtype).requires_grad_(true)
                : torch::randn({batch, heads, sequence, width}, on).to(dtype).requires_grad_(true);
        const torch::Tensor x =
            projection_layout ? leaf.view({batch, sequence, heads, width}).transpose(1, 2) : leaf;
        const auto [cos, sin] = rotary_tables(sequence + 5, width, on);
        const torch::Tensor grad =
            torch::randn({batch, heads, sequence, width}, on).to(dtype).to(torch::kFloat);
        REQUIRE(gpuperf::fused_rotary_applies(x, cos, sin));
        const torch::Tensor y = gpuperf::rotary_embedding(x, cos, sin);
        REQUIRE(y.sizes() == x.sizes());
        REQUIRE(y.scalar_type() == dtype);
        (y.to(torch::kFloat) * grad).sum().backward();
        const torch::Tensor leaf64 = f64(leaf);
        const torch::Tensor x64 = projection_layout
                                      ? leaf64.view({batch, sequence, heads, width}).transpose(1, 2)
                                      : leaf64;
        const torch::Tensor c64 = cos.narrow(0, 0, sequence).to(torch::kDouble);
        const torch::Tensor s64 = sin.narrow(0, 0, sequence).to(torch::kDouble);
        const torch::Tensor y64 = x64 * c64 + rotate_half64(x64) * s64;
        (y64 * grad.to(torch::kDouble)).sum().backward();
        CHECK(relative_error(y, y64) < rounded_once(dtype));
        CHECK(relative_error(leaf.grad(), leaf64.grad()) < rounded_once(dtype));
      }
    }
  }
}

TEST_CASE("linear_activation, swiglu and rotary_embedding are ATen's operations on the CPU",
          "[models][lm]") {
  torch::manual_seed(14);
  const torch::Tensor x = torch::randn({2, 5, 16});
  const torch::Tensor weight = torch::randn({24, 16});
  const torch::Tensor bias = torch::randn({24});
  CHECK_FALSE(gpuperf::fused_linear_applies(x, weight, bias));
  CHECK(torch::equal(gpuperf::linear_activation(x, weight, bias, gpuperf::Activation::kNone),
                     torch::linear(x, weight, bias)));
  CHECK(torch::equal(gpuperf::linear_activation(x, weight, bias, gpuperf::Activation::kGeluTanh),
                     torch::gelu(torch::linear(x, weight, bias), "tanh")));
  // Without a bias (Llama's projections, the tied output layers).
  CHECK(torch::equal(gpuperf::linear_activation(x, weight, {}, gpuperf::Activation::kNone),
                     torch::linear(x, weight)));
  const torch::Tensor a = torch::randn({3, 8});
  const torch::Tensor b = torch::randn({3, 8});
  CHECK_FALSE(gpuperf::fused_swiglu_applies(a, b));
  CHECK(torch::equal(gpuperf::swiglu(a, b), torch::silu(a) * b));
  // Llama's joined projections: the layers one by one.
  const torch::Tensor w1 = torch::randn({8, 16});
  const torch::Tensor w3 = torch::randn({8, 16});
  CHECK_FALSE(gpuperf::fused_swiglu_linear_applies(x, w1, w3));
  CHECK(torch::equal(gpuperf::swiglu_linear(x, w1, w3),
                     torch::silu(torch::linear(x, w1)) * torch::linear(x, w3)));
  // The rotary embedding against the rotation written out in float64: each pair (x_i,
  // x_{i + w/2}) turned by its position's angle.
  const torch::Tensor q = torch::randn({2, 3, 7, 8}, torch::kDouble);
  const auto [cos, sin] = rotary_tables(9, 8, torch::TensorOptions());
  CHECK_FALSE(gpuperf::fused_rotary_applies(q, cos, sin));
  const torch::Tensor got =
      gpuperf::rotary_embedding(q, cos.to(torch::kDouble), sin.to(torch::kDouble));
  const torch::Tensor c = cos.narrow(0, 0, 7).narrow(1, 0, 4).to(torch::kDouble);
  const torch::Tensor s = sin.narrow(0, 0, 7).narrow(1, 0, 4).to(torch::kDouble);
  const torch::Tensor q1 = q.narrow(-1, 0, 4);
  const torch::Tensor q2 = q.narrow(-1, 4, 4);
  CHECK(torch::allclose(got, torch::cat({q1 * c - q2 * s, q2 * c + q1 * s}, -1), 1e-12, 1e-12));
  // rotary_heads: the products split into heads (4 of width 4; k and v 2), q and k rotated.
  const torch::Tensor wq = torch::randn({16, 16}, torch::kDouble);
  const torch::Tensor wk = torch::randn({8, 16}, torch::kDouble);
  const torch::Tensor wv = torch::randn({8, 16}, torch::kDouble);
  const torch::Tensor x64 = x.to(torch::kDouble);
  const auto [cos4, sin4] = rotary_tables(5, 4, torch::TensorOptions());
  const torch::Tensor c4 = cos4.to(torch::kDouble);
  const torch::Tensor s4 = sin4.to(torch::kDouble);
  CHECK_FALSE(gpuperf::fused_rotary_heads_applies(x64, wq, wk, wv, c4, s4, 4, 2));
  const auto heads = gpuperf::rotary_heads(x64, wq, wk, wv, c4, s4, 4, 2);
  const auto split = [](const torch::Tensor& t, std::int64_t n) {
    return t.view({t.size(0), t.size(1), n, t.size(2) / n}).transpose(1, 2);
  };
  CHECK(
      torch::equal(heads[0], gpuperf::rotary_embedding(split(torch::linear(x64, wq), 4), c4, s4)));
  CHECK(
      torch::equal(heads[1], gpuperf::rotary_embedding(split(torch::linear(x64, wk), 2), c4, s4)));
  CHECK(torch::equal(heads[2], split(torch::linear(x64, wv), 2)));
}
