// npe import-reference: a model trained with the authors' PyTorch code, as an npe checkpoint.

#include <cstdio>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "commands.h"
#include "npe/models/model_registry.h"
#include "npe/models/reference_import.h"
#include "option_values.h"

namespace npe::cli {
namespace {

struct ImportArguments {
  std::string input;
  std::string output;
  ReferenceImportOptions options;
  RuntimeArguments runtime;
};

int run_import(const ImportArguments& a) {
  apply_runtime_options(a.runtime);
  auto state = read_reference_state_dict(a.input);
  auto imported = import_reference_model(state, a.options);
  auto& metadata = imported.metadata;
  metadata.command = "npe import-reference " + a.input;
  save_checkpoint(a.output, *imported.model, metadata);
  const auto& c = metadata.model;
  const auto& transformer = c.options<TransformerOptions>();
  const auto* sharing = c.find_options<LayerSharingOptions>();
  int64_t parameters = 0;
  for (const auto& p : imported.model->parameters()) parameters += p.numel();
  std::printf(
      "imported the reference %s from %s: %lld layers, D_z %lld, %lld heads x %lld, D_x %lld, "
      "D_y %lld%s; %lld parameters\nwrote %s\n",
      model_info(c.kind).display_name.c_str(), a.input.c_str(), (long long)transformer.num_layers,
      (long long)transformer.dim_model, (long long)transformer.num_heads,
      (long long)transformer.head_dim, (long long)c.dim_x, (long long)c.dim_y,
      sharing && sharing->share_layer_weights ? ", self- and cross-attention share weights" : "",
      (long long)parameters, a.output.c_str());
  return 0;
}

}  // namespace

Command add_import_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "import-reference",
      "Turn a TNP or TE-TNP trained with the authors' PyTorch code into an npe checkpoint");
  command->footer(
      "\nThe input is the output of npe-convert-reference, which reads the reference code's\n"
      "Lightning .ckpt or torch.save'd state_dict with Python (Debian: python3-torch):\n"
      "  npe-convert-reference model.ckpt converted.pt\n"
      "  npe import-reference converted.pt --out tetnp.pt\n"
      "Layers must be pre-norm (norm_first: True) with two-layer MLPs, as in the reference\n"
      "1-D configurations; TE-TNPs without location updates.");
  auto a = std::make_shared<ImportArguments>();
  command->add_option("input", a->input, "Archive written by npe-convert-reference")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--out", a->output, "Checkpoint to write (atomically)")->required();
  command
      ->add_option("--heads", a->options.num_heads,
                   "Attention heads of a plain TNP (its weights do not show them)")
      ->check(at_least(1))
      ->capture_default_str();
  command
      ->add_option("--min-stddev", a->options.min_stddev,
                   "Added to the predictive standard deviation (the reference min_noise)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_thread_option(*command, a->runtime);
  return {command, [a] { return run_import(*a); }};
}

}  // namespace npe::cli
