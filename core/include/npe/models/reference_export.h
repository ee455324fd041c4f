#pragma once
// Handing models back to the TE-TNP authors' PyTorch code (cambridge-mlg/tnp, tetnp): the
// inverse of reference_import.h. A TNP or TE-TNP becomes a state_dict that the authors' classes
// load with load_state_dict (strict), written in torch.save's format so that torch.load reads
// it in Python.

#include <filesystem>
#include <map>
#include <string>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "npe/models/model.h"

namespace npe {

/// The reference model's weights by their PyTorch names, and what its constructor needs that
/// the weights do not say (class, sizes, heads, min_noise), for the user to build it.
struct ReferenceExport {
  std::map<std::string, torch::Tensor> tensors;
  nlohmann::json architecture;
};

/// Maps a TNP or TE-TNP onto the reference's parameter names, and checks the result by
/// importing it again: the same configuration and the same weights, or CheckpointError saying
/// what the reference architecture cannot hold (another kind; query and key normalised by
/// different weights, which one norm1 cannot express; location updates; distance features).
ReferenceExport export_reference_model(NeuralProcessImpl& model);

/// Writes the state_dict (torch.save's zip format, for torch.load) to `path` and the
/// architecture to PATH.json, each atomically. Throws Error naming the file when it cannot.
void write_reference_export(const ReferenceExport& exported, const std::filesystem::path& path);

}  // namespace npe
