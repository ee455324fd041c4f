#pragma once
// libtorch's TorchScript archives carry debug records (code/**/*.py.debug_pkl): pickled source
// ranges that libtorch unpickles only while it formats an error about the code record beside
// them. libtorch 1.13 indexes its table of source texts with numbers read from those records
// without checking them, so a corrupt checkpoint whose code fails to compile made libtorch read
// a std::string through a wild pointer while it wrote the error (SEGV in
// torch::jit::Source::findSourceRangeThatGenerated; found by fuzz_checkpoint_archive). The
// checkpoints this project reads need none of them, so libtorch is given a copy of the archive
// without them: its error messages then point into the code records themselves.

#include <filesystem>
#include <string>

namespace npe {

/// The bytes of an archive with the same records and format version as `archive`, minus its
/// debug records, written by libtorch's own archive writer. Call after find_archive_problem (the
/// records are read at the sizes the file states). May throw c10::Error.
std::string archive_without_debug_records(const std::filesystem::path& archive);

}  // namespace npe
