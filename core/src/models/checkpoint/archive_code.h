#pragma once
// A guard in front of libtorch's TorchScript compiler. An archive's code records
// (code/**/*.py) are source that libtorch compiles while it loads the archive, and its compiler
// trusts that source: a one-bit change in a checkpoint ("__parameters__" read as
// "__paraieters__") made libtorch 1.13 crash (SEGV in ScriptTypeParser::parseClassConstant;
// found by fuzz_checkpoint_archive). The archives this project reads hold classes that only
// declare parameters, buffers and attributes, so every line is checked against that small
// grammar before libtorch sees it. The rule also keeps methods out of checkpoints: libtorch
// would run a class's __setstate__ while loading.

#include <optional>
#include <string>
#include <string_view>

namespace npe {

/// What an archive's code records may hold beyond declarations.
enum class ArchiveCode {
  /// Checkpoints (torch::serialize::OutputArchive): declarations only.
  Declarations,
  /// npe-convert-reference's archive: also its forward, which returns the tensors.
  DeclarationsAndTensorsForward,
};

/// The first line of `source` (one code record) that the grammar does not allow, described to
/// follow "it has", or nothing when every line is allowed.
std::optional<std::string> find_disallowed_code(std::string_view source, ArchiveCode allowed);

}  // namespace npe
