#include "npe/models/reference_import.h"

#include <fstream>
#include <set>
#include <sstream>

#include <torch/script.h>
#include <torch/torch.h>

#include "archive_debug_records.h"
#include "archive_guard.h"
#include "models/first_line.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/models/model_registry.h"
#include "npe/runtime.h"

namespace npe {
namespace {

constexpr const char* kFormat = "npe-reference-state-dict";
constexpr int64_t kFormatVersion = 1;
constexpr const char* kConvertHint =
    "convert it first with 'npe-convert-reference CHECKPOINT OUTPUT' (needs Debian's "
    "python3-torch), then import OUTPUT";

/// A zip archive from torch.save holds data.pkl but no TorchScript code.
bool looks_like_torch_save_pickle(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(2, '\0');
  in.read(head.data(), 2);
  if (head == "PK") {
    std::stringstream contents;
    contents << in.rdbuf();
    const auto text = contents.str();
    return text.find("data.pkl") != std::string::npos &&
           text.find("constants.pkl") == std::string::npos;
  }
  // Legacy (non-zip) torch.save files start with a pickle protocol marker.
  return head.size() == 2 && static_cast<unsigned char>(head[0]) == 0x80;
}

/// Reads reference tensors by name and remembers which were read, so that weights the mapping
/// left out (a different model) are reported instead of silently dropped.
class WeightLookup {
 public:
  explicit WeightLookup(const ReferenceStateDict& state) : m_state(state) {}
  const torch::Tensor& operator()(const std::string& name) {
    auto it = m_state.tensors.find(name);
    if (it == m_state.tensors.end()) {
      throw CheckpointError("reference weights lack '" + name + "'");
    }
    m_used.insert(name);
    return it->second;
  }
  bool has(const std::string& name) const { return m_state.tensors.count(name) > 0; }
  bool has_prefix(const std::string& prefix) const {
    auto it = m_state.tensors.lower_bound(prefix);
    return it != m_state.tensors.end() && it->first.compare(0, prefix.size(), prefix) == 0;
  }
  const ReferenceStateDict& state() const { return m_state; }
  std::vector<std::string> unused() const {
    std::vector<std::string> names;
    for (const auto& entry : m_state.tensors) {
      if (!m_used.count(entry.first)) names.push_back(entry.first);
    }
    return names;
  }

 private:
  const ReferenceStateDict& m_state;
  std::set<std::string> m_used;
};

/// One architecture of the reference code that can be imported.
struct ReferenceArchitecture {
  std::string name;  ///< "TNP", "TE-TNP"
  bool (*recognises)(const WeightLookup& weights);
  /// The model's configuration, inferred from the weights' names and shapes.
  ModelConfig (*infer_config)(WeightLookup& weights, const ReferenceImportOptions& options);
  /// Reference tensor for each of the model's parameters, by the project's parameter name.
  std::map<std::string, torch::Tensor> (*map_weights)(WeightLookup& weights,
                                                      const ModelConfig& config);
};

int64_t count_layers(const WeightLookup& weights, const std::string& prefix) {
  int64_t n = 0;
  while (weights.has_prefix(prefix + std::to_string(n) + ".")) ++n;
  return n;
}

/// The reference MLP (tnp.networks.mlp.MLP) with num_layers hidden layers stores Linear layers
/// at net.0, net.2, ..., net.(2 num_layers). The project's token embedders, decoder heads and
/// TE attention kernels have exactly two hidden layers.
void require_two_hidden_layers(WeightLookup& weights, const std::string& mlp) {
  for (int i : {0, 2, 4}) weights(mlp + ".net." + std::to_string(i) + ".weight");
  if (weights.has(mlp + ".net.6.weight")) {
    throw CheckpointError("'" + mlp +
                          "' has more than two hidden layers; NP Explorer's models use two");
  }
}

/// Linear layers of a two-hidden-layer reference MLP onto the project's Mlp (linear0..2).
void map_mlp(WeightLookup& weights, const std::string& from, const std::string& to,
             std::map<std::string, torch::Tensor>& out) {
  for (int i = 0; i < 3; ++i) {
    for (const char* p : {"weight", "bias"}) {
      out[to + ".linear" + std::to_string(i) + "." + p] =
          weights(from + ".net." + std::to_string(2 * i) + "." + p);
    }
  }
}

/// One pre-norm attention layer (norm_first: True, as in every reference configuration): the
/// reference applies norm1 to queries and keys and norm2 before the feed-forward block; the
/// project's block has a norm for each (norm_q, norm_k, norm_ff).
void map_attention_layer(WeightLookup& weights, const std::string& from, const std::string& to,
                         int64_t dim_model, std::map<std::string, torch::Tensor>& out) {
  for (const char* p : {"weight", "bias"}) {
    out[to + ".norm_q." + p] = weights(from + ".norm1." + p);
    out[to + ".norm_k." + p] = weights(from + ".norm1." + p);
    out[to + ".norm_ff." + p] = weights(from + ".norm2." + p);
    out[to + ".attention.out." + p] = weights(from + ".attn.to_out.0." + p);
    out[to + ".feed_forward.linear0." + p] = weights(from + ".ff_block.0." + p);
    out[to + ".feed_forward.linear1." + p] = weights(from + ".ff_block.3." + p);
  }
  for (const char* p : {"q", "k", "v"}) {
    out[to + ".attention." + p + ".weight"] =
        weights(from + ".attn.to_" + std::string(p) + ".weight");
  }
  const auto ff = weights(from + ".ff_block.0.weight").size(0);
  if (ff != dim_model) {
    throw CheckpointError(
        "'" + from + "' has a feed-forward width of " + std::to_string(ff) +
        "; NP Explorer's attention blocks use D_z = " + std::to_string(dim_model));
  }
}

void map_head(WeightLookup& weights, std::map<std::string, torch::Tensor>& out) {
  map_mlp(weights, "decoder.z_decoder", "head.mlp", out);
}

ModelConfig base_config(const std::string& kind, const ReferenceImportOptions& options) {
  ModelConfig c(kind);
  c.heteroscedastic = true;  // HeteroscedasticNormalLikelihood: [mean, raw variance]
  c.min_stddev = options.min_stddev;
  if (auto* te = c.find_options<TeAttentionOptions>()) te->update_locations = false;
  return c;
}

// --- TNP (tnp.models.tnp.TNP with TNPTransformerEncoder) ---------------------------------

constexpr const char* kTnpSelf = "encoder.transformer_encoder.mhsa_layers.";
constexpr const char* kTnpCross = "encoder.transformer_encoder.mhca_layers.";

bool is_tnp(const WeightLookup& weights) {
  return weights.has("encoder.xy_encoder.net.0.weight") && weights.has_prefix(kTnpSelf);
}

ModelConfig tnp_config(WeightLookup& weights, const ReferenceImportOptions& options) {
  require_two_hidden_layers(weights, "encoder.xy_encoder");
  require_two_hidden_layers(weights, "decoder.z_decoder");
  if (weights.has_prefix("encoder.x_encoder.") || weights.has_prefix("encoder.y_encoder.")) {
    throw CheckpointError(
        "the TNP has separate x / y encoders; NP Explorer's TNP embeds [x, y] "
        "with one MLP");
  }
  auto c = base_config("tnp", options);
  auto& transformer = c.options<TransformerOptions>();
  const auto& embed = weights("encoder.xy_encoder.net.0.weight");
  transformer.dim_model = weights("encoder.xy_encoder.net.4.weight").size(0);
  c.dim_y = weights("decoder.z_decoder.net.4.weight").size(0) / 2;
  c.dim_x = embed.size(1) - c.dim_y - 1;  // tokens are [x, y, flag]
  transformer.num_layers = count_layers(weights, kTnpSelf);
  if (count_layers(weights, kTnpCross) != transformer.num_layers) {
    throw CheckpointError("the TNP has different numbers of self- and cross-attention layers");
  }
  const auto inner = weights(std::string(kTnpSelf) + "0.attn.to_q.weight").size(0);
  if (options.num_heads < 1 || inner % options.num_heads != 0) {
    throw CheckpointError("the TNP's attention has " + std::to_string(inner) +
                          " query features, which " + std::to_string(options.num_heads) +
                          " heads do not divide (set the number of heads)");
  }
  transformer.num_heads = options.num_heads;
  transformer.head_dim = inner / options.num_heads;
  return c;
}

std::map<std::string, torch::Tensor> tnp_weights(WeightLookup& weights, const ModelConfig& c) {
  const auto& transformer = c.options<TransformerOptions>();
  std::map<std::string, torch::Tensor> out;
  map_mlp(weights, "encoder.xy_encoder", "embed", out);
  // The reference flags targets ([x, 0, 1]) where the project flags the context ([x, y, 1]):
  // flag' = 1 - flag, so the flag column changes sign and its weights move into the bias.
  const auto& w = weights("encoder.xy_encoder.net.0.weight");
  const auto flag = w.select(1, w.size(1) - 1);
  auto w_project = w.clone();
  w_project.select(1, w.size(1) - 1).neg_();
  out["embed.linear0.weight"] = w_project;
  out["embed.linear0.bias"] = weights("encoder.xy_encoder.net.0.bias") + flag;
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    const auto n = std::to_string(l);
    map_attention_layer(weights, kTnpSelf + n, "self" + n, transformer.dim_model, out);
    map_attention_layer(weights, kTnpCross + n, "cross" + n, transformer.dim_model, out);
  }
  map_head(weights, out);
  return out;
}

// --- TE-TNP (tetnp.models.tetnp.TETNP with TETNPTransformerEncoder) -----------------------

constexpr const char* kTeSelf = "encoder.transformer_encoder.mhsa_layers.";
constexpr const char* kTeCross = "encoder.transformer_encoder.mhca_layers.";

bool is_tetnp(const WeightLookup& weights) {
  return weights.has("encoder.y_encoder.net.0.weight") &&
         weights.has(std::string(kTeCross) + "0.attn.kernel.net.0.weight");
}

/// Whether layer l's self-attention weights are its cross-attention's (the reference shares
/// them when no separate mhsa_layer is configured; the state_dict then lists both names).
/// Shared layers' self-attention names count as read: they are aliases.
bool tetnp_layer_shared(WeightLookup& weights, int64_t l) {
  const auto self = std::string(kTeSelf) + std::to_string(l) + ".";
  const auto cross = std::string(kTeCross) + std::to_string(l) + ".";
  std::vector<std::string> twins;
  for (const auto& [name, value] : weights.state().tensors) {
    if (name.compare(0, cross.size(), cross) != 0) continue;
    const auto twin_name = self + name.substr(cross.size());
    if (!weights.has(twin_name)) return false;
    const auto& twin = weights.state().tensors.at(twin_name);
    if (!twin.sizes().equals(value.sizes()) || !torch::equal(twin, value)) return false;
    twins.push_back(twin_name);
  }
  for (const auto& name : twins) weights(name);
  return !twins.empty();
}

ModelConfig tetnp_config(WeightLookup& weights, const ReferenceImportOptions& options) {
  require_two_hidden_layers(weights, "encoder.y_encoder");
  require_two_hidden_layers(weights, "decoder.z_decoder");
  auto c = base_config("tetnp", options);
  auto& transformer = c.options<TransformerOptions>();
  auto& te = c.options<TeAttentionOptions>();
  auto& sharing = c.options<LayerSharingOptions>();
  transformer.dim_model = weights("encoder.y_encoder.net.4.weight").size(0);
  c.dim_y = weights("encoder.y_encoder.net.0.weight").size(1) - 1;  // tokens [y, flag]
  transformer.num_layers = count_layers(weights, kTeCross);
  const auto kernel = std::string(kTeCross) + "0.attn.kernel";
  require_two_hidden_layers(weights, kernel);
  transformer.num_heads = weights(kernel + ".net.4.weight").size(0);
  te.pairwise_width = weights(kernel + ".net.0.weight").size(0);
  c.dim_x = weights(kernel + ".net.0.weight").size(1) - transformer.num_heads;  // [x_n - x_m, dots]
  const auto inner = weights(std::string(kTeCross) + "0.attn.to_q.weight").size(0);
  if (inner % transformer.num_heads != 0) {
    throw CheckpointError("the TE-TNP's attention width " + std::to_string(inner) +
                          " is not a multiple of its " + std::to_string(transformer.num_heads) +
                          " heads");
  }
  transformer.head_dim = inner / transformer.num_heads;
  if (weights.has_prefix(std::string(kTeCross) + "0.attn.phi.")) {
    throw CheckpointError(
        "the TE-TNP updates input locations (phi); importing that variant is "
        "not supported");
  }
  const bool shared = tetnp_layer_shared(weights, 0);
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    if (tetnp_layer_shared(weights, l) != shared) {
      throw CheckpointError(
          "the TE-TNP shares self- and cross-attention weights in some layers "
          "only");
    }
  }
  sharing.share_layer_weights = shared;
  return c;
}

std::map<std::string, torch::Tensor> tetnp_weights(WeightLookup& weights, const ModelConfig& c) {
  const auto& transformer = c.options<TransformerOptions>();
  const auto& sharing = c.options<LayerSharingOptions>();
  std::map<std::string, torch::Tensor> out;
  map_mlp(weights, "encoder.y_encoder", "embed", out);
  auto map_te_layer = [&](const std::string& from, const std::string& to) {
    map_attention_layer(weights, from, to, transformer.dim_model, out);
    // The kernel's first layer acts on [x_n - x_m, dots]; the project splits it into a part on
    // the differences (no bias) and one on the dot products.
    const auto& w = weights(from + ".attn.kernel.net.0.weight");
    out[to + ".attention.rho_dx.weight"] = w.narrow(1, 0, c.dim_x);
    out[to + ".attention.rho_dots.weight"] = w.narrow(1, c.dim_x, transformer.num_heads);
    out[to + ".attention.rho_dots.bias"] = weights(from + ".attn.kernel.net.0.bias");
    for (const char* p : {"weight", "bias"}) {
      out[to + ".attention.rho_hidden." + p] = weights(from + ".attn.kernel.net.2." + p);
      out[to + ".attention.rho_out." + p] = weights(from + ".attn.kernel.net.4." + p);
    }
  };
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    const auto n = std::to_string(l);
    map_te_layer(kTeCross + n, "cross" + n);
    if (!sharing.share_layer_weights) map_te_layer(kTeSelf + n, "self" + n);
  }
  map_head(weights, out);
  return out;
}

const std::vector<ReferenceArchitecture>& reference_architectures() {
  static const std::vector<ReferenceArchitecture> architectures = {
      {"TE-TNP", is_tetnp, tetnp_config, tetnp_weights},
      {"TNP", is_tnp, tnp_config, tnp_weights},
  };
  return architectures;
}

}  // namespace

std::vector<std::string> reference_architecture_names() {
  std::vector<std::string> names;
  for (const auto& a : reference_architectures()) names.push_back(a.name);
  return names;
}

ReferenceStateDict read_reference_state_dict(const std::filesystem::path& path) {
  const auto where = "'" + path.string() + "'";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw CheckpointError("reference checkpoint " + where + " does not exist");
  }
  torch::jit::Module archive;
  try {
    // Before libtorch reads a record, which it allocates at the sizes the file states.
    if (const auto problem =
            find_archive_problem(path, ArchiveCode::DeclarationsAndTensorsForward)) {
      if (looks_like_torch_save_pickle(path)) {
        throw CheckpointError(
            where + " is a PyTorch pickle (torch.save) that libtorch cannot read: " + kConvertHint);
      }
      throw CheckpointError("cannot read reference checkpoint " + where +
                            ": it is corrupt or truncated (it has " + *problem + ")");
    }
    std::istringstream bytes(archive_without_debug_records(path));
    archive = torch::jit::load(bytes, torch::kCPU);
  } catch (const CheckpointError&) {
    throw;
  } catch (const c10::Error& e) {
    if (looks_like_torch_save_pickle(path)) {
      throw CheckpointError(
          where + " is a PyTorch pickle (torch.save) that libtorch cannot read: " + kConvertHint);
    }
    throw CheckpointError("cannot read reference checkpoint " + where + ": " +
                          first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw CheckpointError("cannot read reference checkpoint " + where + ": " + e.what());
  }
  try {
    if (!archive.hasattr("format") || !archive.attr("format").isString() ||
        archive.attr("format").toStringRef() != kFormat || !archive.hasattr("tensors")) {
      throw CheckpointError(where +
                            " is a TorchScript archive but not one written by "
                            "npe-convert-reference; " +
                            kConvertHint);
    }
    const auto version = archive.attr("version");
    if (!version.isInt() || version.toInt() > kFormatVersion) {
      throw CheckpointError(where + " was written by a newer npe-convert-reference");
    }
    const auto tensors = archive.attr("tensors");
    if (!tensors.isGenericDict()) throw CheckpointError(where + " holds no weights");
    ReferenceStateDict state;
    for (const auto& entry : tensors.toGenericDict()) {
      if (!entry.key().isString() || !entry.value().isTensor()) {
        throw CheckpointError(where + " holds an entry that is not a named tensor");
      }
      state.tensors[entry.key().toStringRef()] = entry.value().toTensor();
    }
    if (archive.hasattr("origin") && archive.attr("origin").isString()) {
      state.origin = archive.attr("origin").toStringRef();
    }
    return state;
  } catch (const c10::Error& e) {
    throw CheckpointError("reference checkpoint " + where +
                          " is corrupt: " + first_line(e.what_without_backtrace()));
  }
}

LoadedCheckpoint import_reference_model(const ReferenceStateDict& state,
                                        const ReferenceImportOptions& options) {
  WeightLookup lookup(state);
  const ReferenceArchitecture* architecture = nullptr;
  for (const auto& candidate : reference_architectures()) {
    if (candidate.recognises(lookup)) {
      architecture = &candidate;
      break;
    }
  }
  if (!architecture) {
    std::string names;
    for (const auto& a : reference_architectures()) names += (names.empty() ? "" : ", ") + a.name;
    throw CheckpointError("the weights are not of an architecture that can be imported (" + names +
                          " of the reference code)");
  }
  const auto context = "reference " + architecture->name + ": ";
  ModelConfig config;
  std::map<std::string, torch::Tensor> weights;
  LoadedCheckpoint loaded;
  try {
    config = architecture->infer_config(lookup, options);
    weights = architecture->map_weights(lookup, config);
    loaded.model = make_model(config);
  } catch (const Error& e) {
    throw CheckpointError(context + e.what());
  }

  torch::NoGradGuard no_grad;
  std::set<std::string> filled;
  for (auto& item : loaded.model->named_parameters(true)) {
    auto source = weights.find(item.key());
    if (source == weights.end()) {
      throw CheckpointError(context + "nothing maps onto the model's parameter '" + item.key() +
                            "'");
    }
    if (!source->second.sizes().equals(item.value().sizes())) {
      std::ostringstream msg;
      msg << context << "weights for '" << item.key() << "' have shape " << source->second.sizes()
          << " but the model needs " << item.value().sizes();
      throw CheckpointError(msg.str());
    }
    if (!torch::isfinite(source->second).all().item<bool>()) {
      throw CheckpointError(context + "weights for '" + item.key() + "' are not finite");
    }
    item.value().copy_(source->second);
    filled.insert(item.key());
  }
  if (filled.size() != weights.size()) {
    throw CheckpointError(context + "the mapping names weights the model does not have");
  }
  // Every reference tensor must have been used: left-over weights mean a different model.
  const auto unused = lookup.unused();
  if (!unused.empty()) {
    throw CheckpointError(context + std::to_string(unused.size()) +
                          " weights have no place in NP Explorer's model, e.g. '" + unused.front() +
                          "'");
  }
  loaded.model->eval();

  auto& m = loaded.metadata;
  m.model = config;
  if (config.dim_x == 1 && config.dim_y == 1) m.task = make_task_source("gp1d")->to_json();
  m.size = "reference";
  m.device = "imported";
  m.command = "npe import-reference " + (state.origin.empty() ? std::string("?") : state.origin);
  m.libtorch_version = libtorch_version();
  return loaded;
}

}  // namespace npe
