#include "npe/models/reference_export.h"

#include <set>

#include <torch/serialize.h>
#include <torch/torch.h>

#include "npe/atomic_file.h"
#include "npe/errors.h"
#include "npe/models/reference_import.h"

namespace npe {
namespace {

// The reference encoders' layer lists (tnp.networks.transformer, tetnp.networks.tetransformer).
constexpr const char* kSelfLayers = "encoder.transformer_encoder.mhsa_layers.";
constexpr const char* kCrossLayers = "encoder.transformer_encoder.mhca_layers.";

// The model's parameters by name; each one taken is marked, so that a parameter the reference
// has no place for is reported instead of silently dropped.
class ParameterSource {
 public:
  explicit ParameterSource(NeuralProcessImpl& model) {
    for (const auto& item : model.named_parameters(true))
      m_parameters[item.key()] = item.value().detach().to(torch::kCPU).contiguous();
  }
  const torch::Tensor& operator()(const std::string& name) {
    const auto found = m_parameters.find(name);
    if (found == m_parameters.end())
      throw CheckpointError("the model has no parameter '" + name + "'");
    m_taken.insert(name);
    return found->second;
  }
  std::vector<std::string> untaken() const {
    std::vector<std::string> names;
    for (const auto& item : m_parameters)
      if (!m_taken.count(item.first)) names.push_back(item.first);
    return names;
  }

 private:
  std::map<std::string, torch::Tensor> m_parameters;
  std::set<std::string> m_taken;
};

using Tensors = std::map<std::string, torch::Tensor>;

// The project's Mlp (linear0..2) onto tnp.networks.mlp.MLP's net.0, net.2, net.4.
void export_mlp(ParameterSource& from, const std::string& mlp, const std::string& to,
                Tensors& out) {
  for (int i = 0; i < 3; ++i) {
    for (const char* p : {"weight", "bias"}) {
      out[to + ".net." + std::to_string(2 * i) + "." + p] =
          from(mlp + ".linear" + std::to_string(i) + "." + p);
    }
  }
}

// A pre-norm attention block. The reference normalises queries and keys with one norm1: a model
// whose norm_q and norm_k differ (every model trained here) has no exact counterpart.
void export_attention_layer(ParameterSource& from, const std::string& layer, const std::string& to,
                            Tensors& out) {
  for (const char* p : {"weight", "bias"}) {
    const auto& q = from(layer + ".norm_q." + p);
    const auto& k = from(layer + ".norm_k." + p);
    if (!torch::equal(q, k)) {
      throw CheckpointError(
          "its layer '" + layer + "' normalises queries and keys with different weights (they " +
          "differ by up to " + std::to_string((q - k).abs().max().item<double>()) +
          "): the authors' layers have one norm for both, so it has no exact counterpart there");
    }
    out[to + ".norm1." + p] = q;
    out[to + ".norm2." + p] = from(layer + ".norm_ff." + p);
    out[to + ".attn.to_out.0." + p] = from(layer + ".attention.out." + p);
    out[to + ".ff_block.0." + p] = from(layer + ".feed_forward.linear0." + p);
    out[to + ".ff_block.3." + p] = from(layer + ".feed_forward.linear1." + p);
  }
  for (const char* p : {"q", "k", "v"})
    out[to + ".attn.to_" + p + ".weight"] = from(layer + ".attention." + p + ".weight");
}

Tensors export_tnp(ParameterSource& from, const ModelConfig& c) {
  Tensors out;
  export_mlp(from, "embed", "encoder.xy_encoder", out);
  // The reference flags targets ([x, 0, 1]) where the project flags the context ([x, y, 1]): the
  // inverse of the import's flag' = 1 - flag.
  const auto& w = from("embed.linear0.weight");
  const int64_t flag = w.size(1) - 1;
  auto w_reference = w.clone();
  w_reference.select(1, flag).neg_();
  out["encoder.xy_encoder.net.0.weight"] = w_reference;
  out["encoder.xy_encoder.net.0.bias"] = from("embed.linear0.bias") + w.select(1, flag);
  for (int64_t l = 0; l < c.options<TransformerOptions>().num_layers; ++l) {
    const auto n = std::to_string(l);
    export_attention_layer(from, "self" + n, kSelfLayers + n, out);
    export_attention_layer(from, "cross" + n, kCrossLayers + n, out);
  }
  export_mlp(from, "head.mlp", "decoder.z_decoder", out);
  return out;
}

Tensors export_tetnp(ParameterSource& from, const ModelConfig& c) {
  Tensors out;
  export_mlp(from, "embed", "encoder.y_encoder", out);
  auto te_layer = [&](const std::string& layer, const std::string& to) {
    export_attention_layer(from, layer, to, out);
    // The reference kernel's first layer acts on [x_n - x_m, dots] with one bias.
    out[to + ".attn.kernel.net.0.weight"] = torch::cat(
        {from(layer + ".attention.rho_dx.weight"), from(layer + ".attention.rho_dots.weight")}, 1);
    out[to + ".attn.kernel.net.0.bias"] = from(layer + ".attention.rho_dots.bias");
    for (const char* p : {"weight", "bias"}) {
      out[to + ".attn.kernel.net.2." + p] = from(layer + ".attention.rho_hidden." + p);
      out[to + ".attn.kernel.net.4." + p] = from(layer + ".attention.rho_out." + p);
    }
  };
  const bool shared = c.options<LayerSharingOptions>().share_layer_weights;
  for (int64_t l = 0; l < c.options<TransformerOptions>().num_layers; ++l) {
    const auto n = std::to_string(l);
    te_layer("cross" + n, kCrossLayers + n);
    if (!shared) {
      te_layer("self" + n, kSelfLayers + n);
      continue;
    }
    // Shared layers: PyTorch's state_dict lists the one module under both names.
    const std::string cross = kCrossLayers + n + ".", self = kSelfLayers + n + ".";
    Tensors aliases;
    for (const auto& [name, tensor] : out)
      if (name.compare(0, cross.size(), cross) == 0)
        aliases[self + name.substr(cross.size())] = tensor;
    out.insert(aliases.begin(), aliases.end());
  }
  export_mlp(from, "head.mlp", "decoder.z_decoder", out);
  return out;
}

}  // namespace

ReferenceExport export_reference_model(NeuralProcessImpl& model) {
  const auto& c = model.config();
  const bool tnp = c.kind == "tnp", tetnp = c.kind == "tetnp";
  if (!tnp && !tetnp) {
    throw CheckpointError("a " + c.kind +
                          " model has no counterpart in the authors' code that it can be handed "
                          "to (TNP and TE-TNP can)");
  }
  if (!c.heteroscedastic) {
    throw CheckpointError(
        "the model has a learned noise level; the authors' HeteroscedasticNormalLikelihood "
        "predicts it");
  }
  ParameterSource from(model);
  ReferenceExport exported;
  exported.tensors = tnp ? export_tnp(from, c) : export_tetnp(from, c);
  const auto untaken = from.untaken();
  if (!untaken.empty()) {
    throw CheckpointError(std::to_string(untaken.size()) +
                          " of the model's parameters have no place in the authors' " +
                          (tnp ? "TNP" : "TE-TNP") + ", e.g. '" + untaken.front() + "'");
  }

  // The check: importing the export gives back this model, option for option and weight for
  // weight (the import is tested against the authors' own predictions).
  const auto& transformer = c.options<TransformerOptions>();
  ReferenceImportOptions options;
  options.num_heads = transformer.num_heads;
  options.min_stddev = c.min_stddev;
  LoadedCheckpoint again;
  try {
    again = import_reference_model({exported.tensors, "npe export-reference"}, options);
  } catch (const CheckpointError& e) {
    throw CheckpointError(std::string("the export does not import again: ") + e.what());
  }
  const auto want = c.to_json(), got = again.model->config().to_json();
  for (const auto& item : want.items()) {
    if (!got.contains(item.key()) || got[item.key()] != item.value()) {
      throw CheckpointError("its option " + item.key() + " = " + item.value().dump() +
                            " has no counterpart in the authors' " + (tnp ? "TNP" : "TE-TNP") +
                            " (which has " +
                            (got.contains(item.key()) ? got[item.key()].dump() : "none") + ")");
    }
  }
  for (const auto& item : again.model->named_parameters(true)) {
    for (const auto& mine : model.named_parameters(true)) {
      if (mine.key() == item.key() &&
          !torch::allclose(mine.value().detach().cpu(), item.value(), 0.0, 1e-6)) {
        throw CheckpointError("the export of '" + item.key() + "' does not import again");
      }
    }
  }

  exported.architecture = {{"class", tnp ? "tnp.models.tnp.TNP" : "tetnp.models.tetnp.TETNP"},
                           {"dim_x", c.dim_x},
                           {"dim_y", c.dim_y},
                           {"embed_dim", transformer.dim_model},
                           {"num_heads", transformer.num_heads},
                           {"head_dim", transformer.head_dim},
                           {"feedforward_dim", transformer.dim_model},
                           {"num_layers", transformer.num_layers},
                           {"norm_first", true},
                           {"mlp_num_layers", 2},
                           {"mlp_width", transformer.dim_model},
                           {"likelihood", "HeteroscedasticNormalLikelihood"},
                           {"min_noise", c.min_stddev}};
  if (tetnp) {
    exported.architecture["kernel_width"] = c.options<TeAttentionOptions>().pairwise_width;
    exported.architecture["separate_mhsa_layer"] =
        !c.options<LayerSharingOptions>().share_layer_weights;
  }
  return exported;
}

void write_reference_export(const ReferenceExport& exported, const std::filesystem::path& path) {
  c10::Dict<std::string, torch::Tensor> state;
  for (const auto& [name, tensor] : exported.tensors) state.insert(name, tensor.contiguous());
  const auto bytes = torch::pickle_save(c10::IValue(state));
  write_file_atomically(path, std::string(bytes.begin(), bytes.end()));
  auto json_path = path;
  json_path += ".json";
  write_file_atomically(json_path, exported.architecture.dump(2) + "\n");
}

}  // namespace npe
