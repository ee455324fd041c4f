// npe export-reference: a TNP or TE-TNP of this project as a state_dict for the authors'
// PyTorch classes (the inverse of import-reference).

#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/reference_export.h"
#include "option_values.h"

namespace npe::cli {
namespace {

struct ExportArguments {
  std::string checkpoint;
  std::string output;
};

int run_export(const ExportArguments& a) {
  auto loaded = load_checkpoint(a.checkpoint);
  ReferenceExport exported;
  try {
    exported = export_reference_model(*loaded.model);
  } catch (const CheckpointError& e) {
    throw CheckpointError("cannot export '" + a.checkpoint + "': " + e.what());
  }
  write_reference_export(exported, a.output);
  const auto& arch = exported.architecture;
  std::printf(
      "exported %s as a state_dict of %zu tensors for %s\nwrote %s and %s.json (the "
      "constructor's sizes: embed_dim %lld, num_heads %lld, head_dim %lld, num_layers %lld, "
      "min_noise %g)\nin Python: model.load_state_dict(torch.load('%s'))\n",
      a.checkpoint.c_str(), exported.tensors.size(), arch["class"].get<std::string>().c_str(),
      a.output.c_str(), a.output.c_str(), (long long)arch["embed_dim"].get<int64_t>(),
      (long long)arch["num_heads"].get<int64_t>(), (long long)arch["head_dim"].get<int64_t>(),
      (long long)arch["num_layers"].get<int64_t>(), arch["min_noise"].get<double>(),
      a.output.c_str());
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "export-reference",
      "Write a TNP or TE-TNP checkpoint as a state_dict for the authors' PyTorch classes");
  command->footer(
      "\nThe inverse of import-reference: the file is in torch.save's format, for\n"
      "  model.load_state_dict(torch.load(FILE))\n"
      "with tnp.models.tnp.TNP or tetnp.models.tetnp.TETNP built at the sizes FILE.json lists\n"
      "(pre-norm layers, two-layer MLPs, HeteroscedasticNormalLikelihood(min_noise)). The\n"
      "authors' layers normalise queries and keys with one norm: a model whose two norms differ\n"
      "(one trained here) has no exact counterpart and is refused with the layer named.");
  auto a = std::make_shared<ExportArguments>();
  command->add_option("checkpoint", a->checkpoint, "npe checkpoint of a TNP or TE-TNP")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--out", a->output, "state_dict to write (atomically; and OUT.json)")
      ->required();
  return {command, [a] { return run_export(*a); }};
}

}  // namespace npe::cli
