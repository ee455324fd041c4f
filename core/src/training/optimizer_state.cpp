#include "npe/training/optimizer_state.h"

#include <sstream>
#include <type_traits>
#include <utility>

#include "npe/errors.h"

namespace npe {
namespace {

constexpr const char* kStateKey = "npe_adamw_state";
constexpr int64_t kOptimizerStateFormat = 1;

using StateMap = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>;

// The key libtorch's optimisers file a parameter's state under: the TensorImpl's address, as a
// string (libtorch 1.13) or as a pointer (2.x).
template <typename Key>
Key state_key_of(const torch::Tensor& parameter) {
  void* impl = parameter.unsafeGetTensorImpl();
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream out;  // as c10::guts::to_string formats it
    out << impl;
    return out.str();
  } else {
    return impl;
  }
}

auto state_key(const torch::Tensor& parameter) {
  return state_key_of<typename StateMap::key_type>(parameter);
}

const torch::optim::AdamWParamState* find_state(const torch::optim::AdamW& optimizer,
                                                const torch::Tensor& parameter) {
  const auto& states = optimizer.state();
  const auto found = states.find(state_key(parameter));
  if (found == states.end()) return nullptr;
  return dynamic_cast<const torch::optim::AdamWParamState*>(found->second.get());
}

std::string shape_text(at::IntArrayRef sizes) {
  std::ostringstream out;
  out << sizes;
  return out.str();
}

}  // namespace

void write_adamw_state(torch::serialize::OutputArchive& archive,
                       const torch::optim::AdamW& optimizer, const torch::nn::Module& model) {
  torch::serialize::OutputArchive records;
  records.write("format", c10::IValue(kOptimizerStateFormat));
  for (const auto& item : model.named_parameters()) {
    const auto* state = find_state(optimizer, item.value());
    if (!state) continue;  // no step has updated it yet
    const auto& name = item.key();
    records.write(name + "/step", c10::IValue(state->step()));
    records.write(name + "/exp_avg", state->exp_avg().detach().to(torch::kCPU));
    records.write(name + "/exp_avg_sq", state->exp_avg_sq().detach().to(torch::kCPU));
    if (state->max_exp_avg_sq().defined()) {
      records.write(name + "/max_exp_avg_sq", state->max_exp_avg_sq().detach().to(torch::kCPU));
    }
  }
  archive.write(kStateKey, records);
}

bool read_adamw_state(torch::serialize::InputArchive& archive, torch::optim::AdamW& optimizer,
                      const torch::nn::Module& model, const std::string& where) {
  torch::serialize::InputArchive records;
  if (!archive.try_read(kStateKey, records)) return false;
  c10::IValue format;
  if (!records.try_read("format", format) || !format.isInt() ||
      format.toInt() != kOptimizerStateFormat) {
    throw CheckpointError(where + " has an optimiser state of an unknown format");
  }
  for (const auto& item : model.named_parameters()) {
    const auto& name = item.key();
    const auto& parameter = item.value();
    c10::IValue step;
    if (!records.try_read(name + "/step", step)) continue;  // not updated when it was written
    torch::Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
    if (!step.isInt() || !records.try_read(name + "/exp_avg", exp_avg) ||
        !records.try_read(name + "/exp_avg_sq", exp_avg_sq)) {
      throw CheckpointError(where + " has an incomplete optimiser state for parameter '" + name +
                            "'");
    }
    records.try_read(name + "/max_exp_avg_sq", max_exp_avg_sq);
    for (const auto* moment : {&exp_avg, &exp_avg_sq, &max_exp_avg_sq}) {
      if (moment->defined() && moment->sizes() != parameter.sizes()) {
        throw CheckpointError(where + ": the optimiser state of parameter '" + name +
                              "' has shape " + shape_text(moment->sizes()) + ", the parameter " +
                              shape_text(parameter.sizes()));
      }
    }
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(step.toInt());
    const auto options = parameter.options();
    state->exp_avg(exp_avg.to(options));
    state->exp_avg_sq(exp_avg_sq.to(options));
    if (max_exp_avg_sq.defined()) state->max_exp_avg_sq(max_exp_avg_sq.to(options));
    optimizer.state()[state_key(parameter)] = std::move(state);
  }
  return true;
}

void check_adamw_state(const torch::optim::AdamW& optimizer, const torch::nn::Module& model,
                       const std::string& where) {
  for (const auto& item : model.named_parameters()) {
    const auto* state = find_state(optimizer, item.value());
    if (!state) continue;
    if (!state->exp_avg().defined() || state->exp_avg().sizes() != item.value().sizes()) {
      throw CheckpointError(
          where + " has an optimiser state that does not fit its parameters (parameter '" +
          item.key() +
          "'): it was written by another libtorch version in a format that "
          "cannot be matched; resume it with the libtorch that wrote it");
    }
  }
}

}  // namespace npe
