// GradScaler and AutocastGuard against PyTorch's documented behaviour. The reference is a plain
// re-statement of torch.amp.GradScaler's algorithm (torch/amp/grad_scaler.py and the
// _amp_update_scale_ kernel): scale *= backoff on inf/NaN and reset the tracker; otherwise count
// the step and scale *= growth once growth_interval good steps have passed (if still finite).
#include "testing.h"

#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/cuda.h>
#include <torch/version.h>

// ATen's fused Adam kernels (2.2+), the reference gpuperf's own Adam kernel is held to.
#define GPUPERF_TEST_ATEN_FUSED_ADAM \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2))
#if GPUPERF_TEST_ATEN_FUSED_ADAM
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_sub.h>
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#endif

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "gpuperf/amp/autocast.h"
#include "gpuperf/amp/grad_scaler.h"
#include "gpuperf/base/error.h"
#include "gpuperf/optim/fused_optimizer.h"
#include "gpuperf/optim/weight_copies.h"
#include "gpuperf/train/train_step.h"

namespace {

using gpuperf::detail::AmpKernels;

struct ReferenceScaler {
  float scale;
  std::int64_t tracker = 0;
  double growth = 2.0;
  double backoff = 0.5;
  std::int64_t interval = 2000;

  void update(bool found_inf) {
    if (found_inf) {
      scale = static_cast<float>(scale * backoff);
      tracker = 0;
      return;
    }
    const std::int64_t successful = tracker + 1;
    if (successful == interval) {
      const auto grown = static_cast<float>(scale * growth);
      if (std::isfinite(grown)) scale = grown;
      tracker = 0;
    } else {
      tracker = successful;
    }
  }
};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Drives a GradScaler through a scripted gradient sequence on one parameter with SGD (lr 1) and
// checks every step against the reference: unscaled gradients, skipped steps, parameter values,
// scale and growth tracker.
void run_scripted_sequence(const torch::Device& device) {
  const std::vector<std::vector<float>> gradients = {
      {1, 2, 3, 4},    {0.5, 0, -1, 2}, {1, kInf, 0, 0}, {1, 1, 1, 1}, {-2, 0, 0, kNan},
      {1, 1, 1, 1},    {1, 1, 1, 1},    {1, 1, 1, 1},    {1, 1, 1, 1}, {-kInf, 0, 0, 0},
      {0.25, 0, 0, 0}, {1, 2, 3, 4},    {1, 2, 3, 4},    {1, 2, 3, 4}};
  auto param = torch::zeros({4}, torch::TensorOptions().device(device).requires_grad(true));
  torch::optim::SGD optimizer({param}, torch::optim::SGDOptions(1.0));
  gpuperf::GradScaler scaler(gpuperf::GradScalerOptions().init_scale(1024).growth_interval(3));
  ReferenceScaler reference{1024};
  reference.interval = 3;
  std::vector<float> expected_param(4, 0.0f);
  int skipped = 0;

  for (std::size_t i = 0; i < gradients.size(); ++i) {
    INFO("step " << i);
    const auto loss_scale = scaler.scale(torch::ones({}, torch::TensorOptions().device(device)));
    CHECK(loss_scale.item<float>() == reference.scale);
    const auto truth = torch::tensor(gradients[i]).to(device);
    param.mutable_grad() = truth * reference.scale;  // what backward of the scaled loss gives

    scaler.unscale_(optimizer);
    const bool has_inf = !torch::isfinite(truth).all().item<bool>();
    CHECK(scaler.found_inf(optimizer) == has_inf);
    if (!has_inf) CHECK(torch::equal(param.grad(), truth));  // powers of two: exact

    const bool stepped = scaler.step(optimizer);
    CHECK(stepped == !has_inf);
    if (stepped) {
      for (int k = 0; k < 4; ++k) expected_param[k] -= gradients[i][k];
    } else {
      ++skipped;
    }
    CHECK(torch::equal(param.detach().cpu(), torch::tensor(expected_param)));

    scaler.update();
    reference.update(has_inf);
    CHECK(scaler.get_scale() == reference.scale);
    CHECK(scaler.growth_tracker() == reference.tracker);
  }
  CHECK(skipped == 3);
  // 1024 -> (inf) 512 -> (NaN) 256 -> grows after 3 good steps -> 512 -> (inf) 256 -> 512 ...
  CHECK(scaler.get_scale() == 512);
}

void check_kernels_match_reference(const torch::Device& device, AmpKernels kernels) {
  const auto on = torch::TensorOptions().device(device);
  // Unscaling: fp32 and fp16 gradients, one with a NaN.
  std::vector<torch::Tensor> grads = {torch::full({3}, 8.0f, on),
                                      torch::full({2}, 4.0f, on.dtype(torch::kHalf))};
  auto found_inf = torch::zeros({1}, on);
  const auto inv_scale = torch::full({1}, 0.25f, on);
  gpuperf::detail::unscale_grads(grads, found_inf, inv_scale, kernels);
  CHECK(found_inf.item<float>() == 0);
  CHECK(torch::equal(grads[0].cpu(), torch::full({3}, 2.0f)));
  CHECK(grads[1].scalar_type() == torch::kHalf);
  CHECK(torch::equal(grads[1].cpu(), torch::full({2}, 1.0f, torch::kHalf)));
  grads[1][0] = kNan;
  gpuperf::detail::unscale_grads(grads, found_inf, inv_scale, kernels);
  CHECK(found_inf.item<float>() == 1);

  // The update rule, against the reference, over a sequence with growth, backoff and overflow.
  ReferenceScaler reference{FLT_MAX / 4};
  reference.interval = 2;
  auto scale = torch::full({1}, reference.scale, on);
  auto tracker = torch::zeros({1}, on.dtype(torch::kInt));
  for (bool inf : {false, false, false, false, true, false, false, false, false, false}) {
    const auto found = torch::full({1}, inf ? 1.0f : 0.0f, on);
    gpuperf::detail::update_scale(scale, tracker, found, 2.0, 0.5, 2, kernels);
    reference.update(inf);
    CHECK(scale.item<float>() == reference.scale);
    CHECK(tracker.item<int>() == reference.tracker);
  }
  CHECK(std::isfinite(scale.item<float>()));
}

}  // namespace

TEST_CASE("GradScaler follows PyTorch's scale sequence and skips inf/NaN steps on the CPU",
          "[amp]") {
  run_scripted_sequence(torch::kCPU);
}

TEST_CASE("GradScaler follows PyTorch's scale sequence on CUDA", "[amp][gpu]") {
  GPUPERF_REQUIRE_GPU();
  run_scripted_sequence(torch::kCUDA);
}

TEST_CASE("the tensor-op fallback unscales and updates like PyTorch's kernels", "[amp]") {
  check_kernels_match_reference(torch::kCPU, AmpKernels::kTensorOps);
}

TEST_CASE("ATen's _amp kernels match the reference where the CPU has them", "[amp]") {
  if (!gpuperf::detail::has_amp_kernels(torch::kCPU)) {
    auto scale = torch::ones({1});
    auto tracker = torch::zeros({1}, torch::kInt);
    CHECK_THROWS_AS(gpuperf::detail::update_scale(scale, tracker, torch::zeros({1}), 2, 0.5, 2,
                                                  AmpKernels::kAten),
                    gpuperf::ConfigError);
    return;
  }
  check_kernels_match_reference(torch::kCPU, AmpKernels::kAten);
}

TEST_CASE("ATen's _amp kernels and the tensor-op fallback both match the reference on CUDA",
          "[amp][gpu]") {
  GPUPERF_REQUIRE_GPU();
  check_kernels_match_reference(torch::kCUDA, AmpKernels::kAten);
  check_kernels_match_reference(torch::kCUDA, AmpKernels::kTensorOps);
}

TEST_CASE("GradScaler refuses calls out of order as PyTorch does", "[amp]") {
  auto param = torch::zeros({2}, torch::requires_grad());
  torch::optim::SGD optimizer({param}, torch::optim::SGDOptions(0.1));
  gpuperf::GradScaler scaler;
  CHECK_THROWS_WITH(scaler.unscale_(optimizer), Catch::Contains("scale()"));
  (void)scaler.scale(torch::ones({}));
  param.mutable_grad() = torch::ones({2});
  scaler.unscale_(optimizer);
  CHECK_THROWS_WITH(scaler.unscale_(optimizer), Catch::Contains("already been called"));
  scaler.step(optimizer);
  CHECK_THROWS_WITH(scaler.step(optimizer), Catch::Contains("already been called"));
  CHECK_THROWS_WITH(scaler.unscale_(optimizer), Catch::Contains("after step()"));
  scaler.update();
  CHECK_NOTHROW(scaler.unscale_(optimizer));
}

TEST_CASE("a disabled GradScaler passes everything through", "[amp]") {
  auto param = torch::zeros({2}, torch::requires_grad());
  torch::optim::SGD optimizer({param}, torch::optim::SGDOptions(1.0));
  gpuperf::GradScaler scaler(gpuperf::GradScalerOptions().enabled(false));
  const auto loss = torch::full({}, 3.0f);
  CHECK(torch::equal(scaler.scale(loss), loss));
  param.mutable_grad() = torch::full({2}, kInf);
  CHECK(scaler.step(optimizer));  // no inf check when disabled
  scaler.update();
  CHECK(scaler.get_scale() == 1.0);
}

TEST_CASE("GradScaler state survives save and load and bad options name the field", "[amp]") {
  gpuperf::GradScaler scaler(gpuperf::GradScalerOptions().init_scale(256).growth_interval(5));
  auto param = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD optimizer({param}, torch::optim::SGDOptions(1.0));
  for (int i = 0; i < 3; ++i) {
    (void)scaler.scale(torch::ones({}));
    param.mutable_grad() = torch::ones({1});
    scaler.step(optimizer);
    scaler.update();
  }
  const gpuperf::GradScalerState state = scaler.state_dict();
  CHECK(state.scale == 256);
  CHECK(state.growth_tracker == 3);
  CHECK(state.growth_interval == 5);

  gpuperf::GradScaler restored;
  restored.load_state_dict(state);
  CHECK(restored.state_dict() == state);
  (void)restored.scale(torch::ones({}));
  CHECK(restored.state_dict() == state);

  CHECK_THROWS_WITH(gpuperf::GradScaler(gpuperf::GradScalerOptions().backoff_factor(1.5)),
                    Catch::Contains("backoff_factor"));
  CHECK_THROWS_WITH(gpuperf::GradScaler(gpuperf::GradScalerOptions().growth_interval(0)),
                    Catch::Contains("growth_interval"));
}

TEST_CASE("AutocastGuard casts inside and restores outside and nests", "[amp]") {
  const auto a = torch::randn({4, 4});
  CHECK(torch::mm(a, a).scalar_type() == torch::kFloat);
  {
    gpuperf::AutocastGuard outer(torch::kCPU, torch::kBFloat16);
    CHECK(torch::mm(a, a).scalar_type() == torch::kBFloat16);
    {
      gpuperf::AutocastGuard inner(torch::kCPU, torch::kBFloat16, /*enabled=*/false);
      CHECK(torch::mm(a, a).scalar_type() == torch::kFloat);
    }
    CHECK(torch::mm(a, a).scalar_type() == torch::kBFloat16);
  }
  CHECK(torch::mm(a, a).scalar_type() == torch::kFloat);
}

TEST_CASE("AutocastGuard drops cached weight casts on exit so updated weights are used", "[amp]") {
  torch::nn::Linear layer(4, 1);
  {
    torch::NoGradGuard no_grad;
    layer->weight.fill_(0.5);  // values bf16 holds exactly, before and after the update
    layer->bias.zero_();
  }
  const auto x = torch::ones({1, 4});
  torch::Tensor first;
  {
    gpuperf::AutocastGuard autocast(torch::kCPU, torch::kBFloat16);
    first = layer(x);
  }
  {
    torch::NoGradGuard no_grad;
    layer->weight.add_(1.0);  // an optimizer step, in effect
  }
  torch::Tensor second;
  {
    gpuperf::AutocastGuard autocast(torch::kCPU, torch::kBFloat16);
    second = layer(x);
  }
  // Four inputs of 1: 4 x 0.5 = 2 before, 4 x 1.5 = 6 after. A stale cached cast would give 2.
  CHECK(first.item<float>() == 2.0f);
  CHECK(second.item<float>() == 6.0f);
}

TEST_CASE("AutocastGuard refuses a dtype the device cannot autocast to", "[amp]") {
  CHECK_THROWS_AS(gpuperf::AutocastGuard(torch::kCPU, torch::kDouble), gpuperf::ConfigError);
  CHECK(gpuperf::AutocastGuard::supported(torch::kCUDA, torch::kHalf));
  CHECK(gpuperf::AutocastGuard::supported(torch::kCPU, torch::kBFloat16));
}

namespace {

// Steps a FusedOptimizer and a torch::optim optimizer side by side on identical parameters and
// gradients; the fused one sees the gradients multiplied by a scale and divides them itself, and
// one step in the middle is flagged inf and must change nothing.
void check_fused_matches_torch_optim(const torch::Device& device, gpuperf::OptimizerKind kind) {
  INFO("optimizer " << gpuperf::to_string(kind) << " on " << device.str());
  torch::manual_seed(1);
  const auto on = torch::TensorOptions().device(device);
  auto reference = torch::randn({5, 7}, on).requires_grad_(true);
  auto fused_param = reference.detach().clone().requires_grad_(true);
  const double weight_decay = 0.01;
  gpuperf::TrainStepOptions step_options;
  step_options.optimizer = kind;
  step_options.learning_rate = 0.01;
  step_options.weight_decay = weight_decay;
  step_options.adam_beta2 = 0.95;  // not the default: the betas reach both optimizers
  auto plain = gpuperf::make_optimizer({reference}, step_options);
  gpuperf::FusedOptimizerOptions options(kind, 0.01);
  options.weight_decay = weight_decay;
  options.beta2 = 0.95;
  gpuperf::FusedOptimizer fused({fused_param}, options);
  const auto scale = torch::full({1}, 1024.0f, on);
  for (int step = 0; step < 8; ++step) {
    const auto grad = torch::randn({5, 7}, on);
    const bool overflow = step == 4;
    fused_param.mutable_grad() = grad * 1024.0f;
    fused.step(scale, torch::full({1}, overflow ? 1.0f : 0.0f, on));
    if (!overflow) {
      reference.mutable_grad() = grad.clone();
      plain->step();
    }
    CHECK(torch::allclose(fused_param, reference, /*rtol=*/1e-5, /*atol=*/1e-6));
  }
}

}  // namespace

TEST_CASE("fused optimizers match torch::optim and skip flagged steps where the CPU has them",
          "[amp]") {
  if (!gpuperf::FusedOptimizer::available(torch::kCPU)) {
    auto p = torch::zeros({2}, torch::requires_grad());
    CHECK_THROWS_WITH(gpuperf::FusedOptimizer(
                          {p}, gpuperf::FusedOptimizerOptions(gpuperf::OptimizerKind::kAdam, 1e-3)),
                      Catch::Contains("no fused optimizer kernels"));
    return;
  }
  for (auto kind : {gpuperf::OptimizerKind::kAdam, gpuperf::OptimizerKind::kAdamW,
                    gpuperf::OptimizerKind::kSgd}) {
    check_fused_matches_torch_optim(torch::kCPU, kind);
  }
}

TEST_CASE("fused optimizers match torch::optim and skip flagged steps on CUDA", "[amp][gpu]") {
  GPUPERF_REQUIRE_GPU();
  for (auto kind : {gpuperf::OptimizerKind::kAdam, gpuperf::OptimizerKind::kAdamW,
                    gpuperf::OptimizerKind::kSgd}) {
    check_fused_matches_torch_optim(torch::kCUDA, kind);
  }
}

#if GPUPERF_TEST_ATEN_FUSED_ADAM
namespace {

// Parameters of many sizes for one optimizer: more than one launch's 48 tensors, sizes around
// the kernel's 4,096-element chunks and its 4-element vectors, and one parameter (with its
// gradient) one float past a 16-byte boundary, which takes the element-by-element path.
std::vector<torch::Tensor> adam_test_parameters() {
  const std::vector<std::int64_t> sizes = {1, 3, 4, 5, 4095, 4096, 4097, 3 * 4096 + 7, 70001};
  std::vector<torch::Tensor> out;
  for (int i = 0; i < 61; ++i) {
    out.push_back(torch::randn({sizes[i % sizes.size()]}, torch::kCUDA));
  }
  out.push_back(torch::randn({4099}, torch::kCUDA).narrow(0, 1, 4098).detach());
  return out;
}

}  // namespace
#endif

TEST_CASE("gpuperf's Adam kernel matches ATen's fused Adam and AdamW and the fp64 algorithm",
          "[amp][gpu]") {
  GPUPERF_REQUIRE_GPU();
#if !GPUPERF_TEST_ATEN_FUSED_ADAM
  FAIL("SKIPPED: this LibTorch has no fused Adam kernels to compare with");
#else
  for (auto kind : {gpuperf::OptimizerKind::kAdam, gpuperf::OptimizerKind::kAdamW}) {
    INFO("optimizer " << gpuperf::to_string(kind));
    torch::manual_seed(3);
    std::vector<torch::Tensor> ours = adam_test_parameters();
    std::vector<torch::Tensor> aten, exp_avg, exp_avg_sq, steps;
    std::vector<torch::Tensor> reference, ref_m, ref_v;  // float64
    for (auto& p : ours) {
      aten.push_back(p.detach().clone());
      exp_avg.push_back(torch::zeros_like(p));
      exp_avg_sq.push_back(torch::zeros_like(p));
      steps.push_back(torch::zeros({}, p.options()));
      reference.push_back(p.detach().to(torch::kDouble));
      ref_m.push_back(torch::zeros_like(reference.back()));
      ref_v.push_back(torch::zeros_like(reference.back()));
      p.requires_grad_(true);
    }
    gpuperf::FusedOptimizerOptions options(kind, 1e-3);
    options.beta2 = 0.95;
    options.weight_decay = 0.1;
    gpuperf::FusedOptimizer fused(ours, options);
    const torch::Tensor lr = torch::full({}, 1e-3, torch::TensorOptions(torch::kCUDA));
    const double lr64 = static_cast<double>(static_cast<float>(1e-3));  // a float32 rate
    const auto scale = torch::full({1}, 1024.0f, torch::kCUDA);
    int t = 0;  // the reference's step count
    for (int step = 0; step < 5; ++step) {
      const bool overflow = step == 2;
      const auto inf = torch::full({1}, overflow ? 1.0f : 0.0f, torch::kCUDA);
      // Scaled gradients; the last parameter's one float past a 16-byte boundary, as the
      // parameter.
      std::vector<torch::Tensor> grads;
      for (std::size_t i = 0; i < ours.size(); ++i) {
        grads.push_back(torch::randn({ours[i].numel()}, torch::kCUDA) * 1024.0f);
        ours[i].mutable_grad() =
            i + 1 < ours.size()
                ? grads[i].clone()
                : torch::empty({grads[i].numel() + 1}, torch::kCUDA).narrow(0, 1, grads[i].numel());
        if (i + 1 == ours.size()) ours[i].mutable_grad().copy_(grads[i]);
      }
      std::vector<torch::Tensor> unscaled;  // before ATen's kernel divides `grads` in place
      for (const auto& g : grads) unscaled.push_back(g.to(torch::kDouble) / 1024.0);
      fused.step(scale, inf);
      at::_foreach_add_(steps, 1);
      const std::vector<torch::Tensor> none;
      if (kind == gpuperf::OptimizerKind::kAdam) {
        at::_fused_adam_(aten, grads, exp_avg, exp_avg_sq, none, steps, lr, options.beta1,
                         options.beta2, options.weight_decay, options.eps, false, false, scale,
                         inf);
      } else {
        at::_fused_adamw_(aten, grads, exp_avg, exp_avg_sq, none, steps, lr, options.beta1,
                          options.beta2, options.weight_decay, options.eps, false, false, scale,
                          inf);
      }
      at::_foreach_sub_(steps, std::vector<torch::Tensor>(steps.size(), inf.reshape({})));
      if (!overflow) {
        // torch.optim's documented algorithm (Adam, AdamW) in float64.
        ++t;
        for (std::size_t i = 0; i < ours.size(); ++i) {
          torch::Tensor g = unscaled[i];
          torch::Tensor& p = reference[i];
          if (kind == gpuperf::OptimizerKind::kAdamW) {
            p = p - lr64 * options.weight_decay * p;
          } else {
            g = g + options.weight_decay * p;
          }
          ref_m[i] = options.beta1 * ref_m[i] + (1 - options.beta1) * g;
          ref_v[i] = options.beta2 * ref_v[i] + (1 - options.beta2) * g * g;
          const torch::Tensor m_hat = ref_m[i] / (1 - std::pow(options.beta1, t));
          const torch::Tensor v_hat = ref_v[i] / (1 - std::pow(options.beta2, t));
          p = p - lr64 * m_hat / (v_hat.sqrt() + options.eps);
        }
      }
      double largest_from_aten = 0;
      double largest_from_reference = 0;
      std::int64_t equal = 0;
      std::int64_t total = 0;
      for (std::size_t i = 0; i < ours.size(); ++i) {
        const torch::Tensor mine = ours[i].detach();
        // Relative to the parameter or the step, whichever is larger: where the update
        // cancels most of a parameter, one rounding of the step is a large part of what is left.
        largest_from_aten =
            std::max(largest_from_aten,
                     ((mine - aten[i]).abs() / aten[i].abs().clamp_min(lr64)).max().item<double>());
        largest_from_reference =
            std::max(largest_from_reference,
                     (mine.to(torch::kDouble) - reference[i]).abs().max().item<double>());
        equal += mine.eq(aten[i]).sum().item<std::int64_t>();
        total += mine.numel();
        // The gradients divided by the scale, as ATen leaves them.
        CHECK(torch::allclose(ours[i].grad(), grads[i], 1e-6, 0));
      }
      INFO(
          "step " << step << ": " << equal << " of " << total
                  << " parameters bitwise equal to ATen's; largest difference (of the parameter or "
                     "the rate) "
                  << largest_from_aten << ", largest from float64 " << largest_from_reference);
      // A float32 ulp is 1.2e-7 of the value: the two kernels round the step in a different
      // order, and the moments carry those differences into later steps (up to 1e-6 by step 5).
      CHECK(largest_from_aten <= 2e-6);
      // The update moves each parameter by about the rate (1e-3) a step: float32 keeps it to
      // 1e-7 of the parameter's size (randn values, a few at most).
      CHECK(largest_from_reference <= 2e-6);
      if (step == 4) {
        WARN(gpuperf::to_string(kind) << ", after 4 updates: " << equal << " of " << total
                                      << " parameters bitwise equal to ATen's");
      }
    }
  }
#endif
}

TEST_CASE("an update beside backward gives step()'s parameters, moments and copies to the bit",
          "[amp][gpu]") {
  GPUPERF_REQUIRE_GPU();
  // Six 2048 x 2048 layers (25M elements): backward hands their gradients over one by one, and
  // the updates go in launches of a few million elements while backward still runs.
  const auto make = [] {
    torch::manual_seed(21);
    torch::nn::Sequential net;
    for (int i = 0; i < 6; ++i) {
      net->push_back(torch::nn::Linear(2048, 2048));
      net->push_back(torch::nn::Functional(torch::tanh));
    }
    net->to(torch::kCUDA);
    return net;
  };
  torch::nn::Sequential after = make();
  torch::nn::Sequential beside = make();
  gpuperf::FusedOptimizerOptions o(gpuperf::OptimizerKind::kAdamW, 1e-3);
  o.weight_decay = 0.1;
  gpuperf::FusedOptimizer step_after(after->parameters(), o);
  gpuperf::FusedOptimizer step_beside(beside->parameters(), o);
  gpuperf::WeightCopies copies_after(torch::kBFloat16);
  gpuperf::WeightCopies copies_beside(torch::kBFloat16);
  (void)copies_after.get(after->parameters(), torch::kBFloat16);
  (void)copies_beside.get(beside->parameters(), torch::kBFloat16);
  step_after.write_copies(&copies_after);
  step_beside.write_copies(&copies_beside);
  torch::manual_seed(22);
  for (int s = 0; s < 3; ++s) {
    const torch::Tensor x = torch::randn({64, 2048}, torch::kCUDA);
    after->forward(x).square().mean().backward();
    step_after.step();
    step_after.zero_grad();
    const torch::Tensor loss = beside->forward(x).square().mean();
    REQUIRE(step_beside.begin_step_in_backward());
    loss.backward();
    step_beside.finish_step_in_backward();
    CHECK(step_beside.ran_own_kernel());
    step_beside.zero_grad();
  }
  const auto a = after->parameters();
  const auto b = beside->parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("parameter " << i);
    CHECK(torch::equal(a[i], b[i]));
    CHECK_FALSE(torch::equal(a[i], make()->parameters()[i]));  // it trained
    // The copies hold the updated values (written by the kernel, counted current).
    CHECK(torch::equal(copies_beside.copy_of(b[i]), b[i].detach().to(torch::kBFloat16)));
    CHECK(torch::equal(copies_beside.copy_of(b[i]), copies_after.copy_of(a[i])));
  }
  // The moments count too: steps 2 and 3 read the first steps' moments. SGD is not armed.
  gpuperf::FusedOptimizer sgd(beside->parameters(),
                              gpuperf::FusedOptimizerOptions(gpuperf::OptimizerKind::kSgd, 0.1));
  CHECK_FALSE(sgd.begin_step_in_backward());
}

TEST_CASE("WeightCopies keeps 16-bit copies and casts again what changed since written", "[amp]") {
  torch::manual_seed(4);
  std::vector<torch::Tensor> params = {torch::randn({3, 5}), torch::randn({7})};
  const auto bf16 = [](const torch::Tensor& t) { return t.to(torch::kBFloat16); };
  gpuperf::WeightCopies copies(torch::kBFloat16);
  CHECK(copies.get(params, torch::kHalf).empty());  // another dtype: the caller casts
  CHECK(copies.size() == 0);
  const std::vector<torch::Tensor> got = copies.get(params, torch::kBFloat16);
  REQUIRE(got.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) CHECK(torch::equal(got[i], bf16(params[i])));
  // Unchanged parameters: the same copies, not new ones.
  CHECK(copies.get(params, torch::kBFloat16)[0].data_ptr() == got[0].data_ptr());
  // A parameter changed in place (its version moves): cast again when next asked, into the
  // same memory (a captured graph's pointers stay good).
  {
    const torch::NoGradGuard no_grad;
    params[0].mul_(2);
  }
  const std::vector<torch::Tensor> again = copies.get(params, torch::kBFloat16);
  CHECK(again[0].data_ptr() == got[0].data_ptr());
  CHECK(torch::equal(again[0], bf16(params[0])));
  params[1].add_(1);
  copies.refresh();
  CHECK(torch::equal(copies.copy_of(params[1]), bf16(params[1])));
  // written(): the optimizer wrote both, so the copy counts as current and refresh() leaves it
  // (here it was not written: it keeps the old value, which shows refresh() did not cast it).
  const torch::Tensor before = copies.copy_of(params[1]).clone();
  params[1].add_(1);
  copies.written(params[1]);
  copies.refresh();
  CHECK(torch::equal(copies.copy_of(params[1]), before));
  // forget(): a write the version counter missed (here through data_ptr()) is cast again.
  params[0].data_ptr<float>()[0] += 1.0f;
  CHECK_FALSE(torch::equal(copies.get(params, torch::kBFloat16)[0], bf16(params[0])));
  copies.forget();
  CHECK(torch::equal(copies.get(params, torch::kBFloat16)[0], bf16(params[0])));
  // Another list (order, length) or a tensor without a copy: none.
  CHECK(copies.get({params[1], params[0]}, torch::kBFloat16).empty());
  CHECK(copies.get({params[0]}, torch::kBFloat16).empty());
  CHECK_FALSE(copies.copy_of(torch::randn({2})).defined());
  // A list naming a tensor twice, or one that is not float32: nothing registered.
  gpuperf::WeightCopies other(torch::kHalf);
  CHECK(other.get({params[0], params[0]}, torch::kHalf).empty());
  CHECK(other.get({torch::randn({2}, torch::kDouble)}, torch::kHalf).empty());
  CHECK(other.size() == 0);
  // The current copies: none outside a scope; scopes nest and restore.
  CHECK(gpuperf::WeightCopies::current() == nullptr);
  {
    const gpuperf::WeightCopies::Scope outer(&copies);
    CHECK(gpuperf::WeightCopies::current() == &copies);
    {
      const gpuperf::WeightCopies::Scope inner(&other);
      CHECK(gpuperf::WeightCopies::current() == &other);
    }
    CHECK(gpuperf::WeightCopies::current() == &copies);
  }
  CHECK(gpuperf::WeightCopies::current() == nullptr);
  CHECK_THROWS_WITH(gpuperf::WeightCopies(torch::kFloat), Catch::Contains("WeightCopies"));
  // Contiguous parameters on one device: copies back to back in one allocation, in the list's
  // order, each start 16 bytes on from the last end at most (layers reading one input multiply
  // by neighbouring copies as one matrix).
  std::vector<torch::Tensor> three = {torch::randn({4, 6}), torch::randn({3}),
                                      torch::randn({2, 6})};
  gpuperf::WeightCopies together(torch::kBFloat16);
  const std::vector<torch::Tensor> kept = together.get(three, torch::kBFloat16);
  REQUIRE(kept.size() == 3);
  CHECK(kept[0].storage().is_alias_of(kept[2].storage()));
  CHECK(kept[1].storage_offset() == 24);
  CHECK(kept[2].storage_offset() == 32);  // 24 + 3 rounded up to 8 bf16 values (16 bytes)
  for (std::size_t i = 0; i < 3; ++i) CHECK(torch::equal(kept[i], three[i].to(torch::kBFloat16)));
  // One not contiguous: each copy its own, in the parameter's memory order.
  const torch::Tensor transposed = torch::randn({6, 4}).t();
  gpuperf::WeightCopies apart(torch::kBFloat16);
  const std::vector<torch::Tensor> own = apart.get({three[0], transposed}, torch::kBFloat16);
  REQUIRE(own.size() == 2);
  CHECK_FALSE(own[0].storage().is_alias_of(own[1].storage()));
  CHECK(own[1].strides() == transposed.strides());
}

TEST_CASE("empty_back_to_back keeps each tensor's shape and strides at 16-byte starts", "[amp]") {
  // A size-1 dimension's stride is free in a contiguous tensor: the copy keeps the tensor's own.
  const torch::Tensor row = torch::randn({5}).as_strided({1, 5}, {99, 1});
  REQUIRE(row.is_contiguous());
  const std::vector<torch::Tensor> like = {torch::randn({3, 3}), row, torch::randn({2, 2, 2})};
  const std::vector<torch::Tensor> half = gpuperf::empty_back_to_back(like, torch::kHalf);
  REQUIRE(half.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("tensor " << i);
    CHECK(half[i].scalar_type() == torch::kHalf);
    CHECK(half[i].sizes() == like[i].sizes());
    CHECK(half[i].strides() == like[i].strides());
    CHECK(half[i].storage().is_alias_of(half[0].storage()));
  }
  // 9 and 5 values, each rounded up to 8 fp16 values (16 bytes).
  CHECK(half[0].storage_offset() == 0);
  CHECK(half[1].storage_offset() == 16);
  CHECK(half[2].storage_offset() == 24);
  // Writing one leaves its neighbours as they were.
  for (const auto& t : half) t.fill_(1);
  half[1].fill_(2);
  CHECK(torch::equal(half[0], torch::ones({3, 3}, torch::kHalf)));
  CHECK(torch::equal(half[2], torch::ones({2, 2, 2}, torch::kHalf)));
  CHECK(gpuperf::empty_back_to_back({}, torch::kBFloat16).empty());
}

TEST_CASE("GradScaler drives a fused optimizer without a host sync and backs off on overflow",
          "[amp][gpu]") {
  GPUPERF_REQUIRE_GPU();
  auto param = torch::zeros({4}, torch::TensorOptions().device(torch::kCUDA).requires_grad(true));
  gpuperf::FusedOptimizerOptions options(gpuperf::OptimizerKind::kSgd, 1.0);
  options.momentum = 0;
  gpuperf::FusedOptimizer optimizer({param}, options);
  gpuperf::GradScaler scaler(gpuperf::GradScalerOptions().init_scale(1024).growth_interval(2));
  ReferenceScaler reference{1024};
  reference.interval = 2;
  std::vector<float> expected(4, 0.0f);
  const std::vector<std::vector<float>> gradients = {{1, 2, 3, 4},         {1, kInf, 0, 0},
                                                     {0.5, 0.5, 0.5, 0.5}, {1, 1, 1, 1},
                                                     {kNan, 0, 0, 0},      {2, 2, 2, 2}};
  for (const auto& g : gradients) {
    (void)scaler.scale(torch::ones({}, torch::kCUDA));
    param.mutable_grad() = torch::tensor(g).to(torch::kCUDA) * reference.scale;
    scaler.step(optimizer);
    const bool inf = !std::all_of(g.begin(), g.end(), [](float v) { return std::isfinite(v); });
    CHECK(scaler.found_inf_tensor(&optimizer).item<float>() == (inf ? 1.0f : 0.0f));
    if (!inf) {
      for (int k = 0; k < 4; ++k) expected[k] -= g[k];
    }
    scaler.update();
    reference.update(inf);
    CHECK(torch::equal(param.detach().cpu(), torch::tensor(expected)));
    CHECK(scaler.get_scale() == reference.scale);
    CHECK(scaler.growth_tracker() == reference.tracker);
  }
}
