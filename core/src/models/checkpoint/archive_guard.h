#pragma once
// Guards in front of libtorch's archive reader, which trusts two kinds of size written in a
// checkpoint before checking them against the file:
// - the zip directory's size of a record once inflated: libtorch allocates that much before
//   inflating (a 120 KB corrupt checkpoint claiming 3.8 GB for a compressed record, found by
//   fuzz_checkpoint_archive in CI);
// - the lengths inside its pickles (pickle_guard.h).
// Both are checked here, directory first, so that no record is read at a size the file cannot
// hold. The code records, which libtorch compiles, are checked against a grammar of plain
// declarations (archive_code.h).

#include <filesystem>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "archive_code.h"

namespace npe {

/// Reads the zip directory with minizip. Returns a description of the first record whose stated
/// sizes the file and its compression method cannot hold (or of a directory that cannot be
/// read at all), or nothing when every record is plausible.
std::optional<std::string> find_implausible_record_size(const std::filesystem::path& archive);

/// What libtorch's archive reader checks in its constructor, checked first with minizip: that
/// the records lie in one folder, named by the first record, and that its version record holds a
/// format version this libtorch reads. libtorch throws from that constructor without releasing
/// miniz's reader state, ~1.7 KB per refused file: a user opening bad files leaks it, and a long
/// fuzz run grew by 177 MB over 197 k inputs, on course for the fuzzer's memory limit. Also
/// refuses what libtorch would read without complaint but ambiguously: records marked as
/// folders, and two records whose names are equal ignoring case (miniz's lookup ignores case).
/// Returns the problem, phrased to follow "it has", or nothing.
std::optional<std::string> find_unsupported_layout(const std::filesystem::path& archive);

/// Whether the archive is a TorchScript program that defines a `forward` method (a model scripted
/// with torch.jit.script), told from the zip layout and its code records alone with minizip:
/// nothing is compiled or run. A checkpoint's code only declares; a program's defines methods.
/// False for anything that is not a readable libtorch archive.
bool archive_defines_forward(const std::filesystem::path& archive);

/// Every check above, then the lengths in each pickle record (data.pkl, constants.pkl and the
/// *.debug_pkl records libtorch unpickles when it formats an error) and the lines of each code
/// record. Returns the first problem found, phrased to follow "it has". libtorch's reader may
/// throw c10::Error on a file it cannot open as an archive.
std::optional<std::string> find_archive_problem(
    const std::filesystem::path& archive, ArchiveCode allowed_code = ArchiveCode::Declarations);

/// A tensor as libtorch rebuilds it from a checkpoint's pickle: a view (offset, sizes, strides,
/// all read from the file) of a storage read from a record. libtorch does not check the view
/// against the storage, so a corrupt pickle makes a tensor whose elements lie past its data, and
/// copying from it read out of bounds (found by fuzz_checkpoint_archive). Returns what it is,
/// phrased to follow "the weights are", or nothing when every element lies inside the storage.
std::optional<std::string> find_view_beyond_storage(const at::Tensor& tensor);

}  // namespace npe
