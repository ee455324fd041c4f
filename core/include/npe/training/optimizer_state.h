#pragma once
// AdamW's state in a resumable checkpoint, keyed by parameter name and stored on the CPU.
//
// libtorch's own Optimizer::save keys each parameter's state by the parameter's address (a string
// in libtorch 1.13, a pointer in 2.x) and keeps the tensors on the device they were on. Found on
// the first CUDA runs: a checkpoint written on a GPU could not be opened on a CPU-only machine,
// and a 1.13 checkpoint resumed under libtorch 2.11 paired moments with the wrong parameters
// ("The size of tensor a (16) must match the size of tensor b (32)"). Names and CPU tensors make
// a run resumable on any device under any supported libtorch.
#include <string>

#include <torch/torch.h>

namespace npe {

/// Writes the moments and step count of every parameter of `model` that `optimizer` holds state
/// for into `archive` (as one sub-archive).
void write_adamw_state(torch::serialize::OutputArchive& archive,
                       const torch::optim::AdamW& optimizer, const torch::nn::Module& model);

/// Reads what write_adamw_state wrote into `optimizer`, on each parameter's device. Returns false
/// when `archive` has no such record (a checkpoint from before it existed). Throws
/// CheckpointError naming `where` and the parameter when a record does not fit the model.
bool read_adamw_state(torch::serialize::InputArchive& archive, torch::optim::AdamW& optimizer,
                      const torch::nn::Module& model, const std::string& where);

/// Throws CheckpointError naming `where` unless every state `optimizer` holds has the shape of
/// its parameter (checks what libtorch's own loader restored from an older checkpoint).
void check_adamw_state(const torch::optim::AdamW& optimizer, const torch::nn::Module& model,
                       const std::string& where);

}  // namespace npe
