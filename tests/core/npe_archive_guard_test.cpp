// The guard in front of libtorch's archive reader: a record whose zip directory states sizes the
// file cannot hold is refused before libtorch allocates them (CI's fuzz_checkpoint_archive found
// a 120 KB checkpoint that made it allocate 3.8 GB), and a code record that is more than plain
// declarations is refused before libtorch compiles it (a one-bit change crashed libtorch).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <caffe2/serialize/inline_container.h>
#include <unzip.h>
#include <zip.h>

#include "models/checkpoint/archive_code.h"
#include "models/checkpoint/archive_debug_records.h"
#include "models/checkpoint/archive_guard.h"
#include "models/checkpoint/pickle_guard.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;
using testing::tiny_config;

// Offsets of the fields this suite rewrites, in a zip's central directory entry and in a
// record's local header (PKWARE APPNOTE 4.3.7 and 4.3.12).
constexpr size_t kCentralMethod = 10, kCentralUncompressed = 24, kCentralNameLength = 28,
                 kCentralExternalAttributes = 38, kCentralLocalOffset = 42, kCentralName = 46;
constexpr size_t kLocalMethod = 8, kLocalUncompressed = 22;

void put_le(std::string& bytes, size_t at, uint32_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
uint32_t get_le(const std::string& bytes, size_t at, int width) {
  uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = value << 8 | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

class ArchiveGuard : public testing::TemporaryFolderTest {
 protected:
  void SetUp() override {
    TemporaryFolderTest::SetUp();
    path = dir / "cnp.pt";
    auto model = make_model(tiny_config("cnp"));
    CheckpointMetadata metadata;
    metadata.model = model->config();
    save_checkpoint(path, *model, metadata);
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }

  // Rewrites a field of the record whose name ends with `suffix`, in the central directory and
  // (when local_at is given) in its local header too, then writes the file back.
  void rewrite(const std::string& suffix, size_t central_at, size_t local_at, uint32_t value,
               int width) {
    bool found = false;
    for (size_t at = bytes.find("PK\x01\x02"); at != std::string::npos;
         at = bytes.find("PK\x01\x02", at + 4)) {
      const auto name = bytes.substr(at + kCentralName, get_le(bytes, at + kCentralNameLength, 2));
      if (name.size() < suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      put_le(bytes, at + central_at, value, width);
      if (local_at)
        put_le(bytes, get_le(bytes, at + kCentralLocalOffset, 4) + local_at, value, width);
      found = true;
    }
    ASSERT_TRUE(found) << "no record named *" << suffix;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  fs::path path;
  std::string bytes;
};

TEST_F(ArchiveGuard, ACheckpointAsSavedPasses) {
  EXPECT_EQ(find_implausible_record_size(path), std::nullopt);
  EXPECT_EQ(find_archive_problem(path), std::nullopt);
  EXPECT_NO_THROW(load_checkpoint(path));
}

TEST_F(ArchiveGuard, ADeflatedRecordClaimingGigabytesIsRefusedBeforeLoading) {
  // The shape of CI's finding: a deflated record whose inflated size reads 0xF4000000.
  rewrite("data.pkl", kCentralMethod, kLocalMethod, 8, 2);
  rewrite("data.pkl", kCentralUncompressed, kLocalUncompressed, 0xF4000000u, 4);
  const auto problem = find_implausible_record_size(path);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("data.pkl"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("4093640704 bytes"), std::string::npos) << *problem;
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "more than deflate can expand");
}

TEST_F(ArchiveGuard, ADeflatedRecordWithinDeflatesRatioIsNotRefused) {
  // 1000:1 is possible for deflate (a run of zeros): the guard must not refuse it.
  rewrite("version", kCentralMethod, 0, 8, 2);
  // The version record is 2 bytes stored; claim 1000 times that, deflated.
  rewrite("version", kCentralUncompressed, 0, 2000, 4);
  EXPECT_EQ(find_implausible_record_size(path), std::nullopt);
}

TEST_F(ArchiveGuard, AStoredRecordWhoseSizesDisagreeIsRefused) {
  rewrite("data.pkl", kCentralUncompressed, 0, 0x7fffffffu, 4);
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "whose two sizes differ");
}

TEST_F(ArchiveGuard, ACompressionMethodLibtorchCannotReadIsRefused) {
  rewrite("data.pkl", kCentralMethod, kLocalMethod, 12, 2);  // bzip2
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "method libtorch cannot read (12)");
}

TEST_F(ArchiveGuard, AFileWithoutAZipDirectoryIsRefused) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  const auto problem = find_implausible_record_size(path);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("zip directory"), std::string::npos) << *problem;
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "corrupt or truncated");
}

// Copies the zip archive `from` to `to` record by record (all stored, as libtorch reads them),
// with `edit` applied to the text of each record whose name ends with `suffix`, and `rename`
// (when given) to every record's name.
void copy_archive_editing(const fs::path& from, const fs::path& to, const std::string& suffix,
                          const std::function<void(std::string&)>& edit,
                          const std::function<void(std::string&)>& rename = {}) {
  unzFile in = unzOpen64(from.c_str());
  zipFile out = zipOpen64(to.c_str(), APPEND_STATUS_CREATE);
  ASSERT_TRUE(in && out);
  for (int more = unzGoToFirstFile(in); more == UNZ_OK; more = unzGoToNextFile(in)) {
    char name[512] = {};
    unz_file_info64 info{};
    ASSERT_EQ(unzGetCurrentFileInfo64(in, &info, name, sizeof name - 1, nullptr, 0, nullptr, 0),
              UNZ_OK);
    std::string data(info.uncompressed_size, '\0');
    ASSERT_EQ(unzOpenCurrentFile(in), UNZ_OK);
    ASSERT_EQ(unzReadCurrentFile(in, data.data(), static_cast<unsigned>(data.size())),
              static_cast<int>(data.size()));
    unzCloseCurrentFile(in);
    std::string record = name;
    if (record.size() >= suffix.size() &&
        record.compare(record.size() - suffix.size(), suffix.size(), suffix) == 0)
      edit(data);
    if (rename) rename(record);
    ASSERT_EQ(zipOpenNewFileInZip64(out, record.c_str(), nullptr, nullptr, 0, nullptr, 0, nullptr,
                                    0, 0, 0),
              ZIP_OK);
    zipWriteInFileInZip(out, data.data(), static_cast<unsigned>(data.size()));
    zipCloseFileInZip(out);
  }
  unzClose(in);
  zipClose(out, nullptr);
}

TEST_F(ArchiveGuard, ACodeRecordThatIsNotADeclarationIsRefusedBeforeLibtorchCompilesIt) {
  // fuzz_checkpoint_archive's finding: "__parameters__" read as "__paraieters__" (one bit in a
  // stored record) made libtorch 1.13 compile a class constant without a type and crash.
  const auto edited = dir / "edited.pt";
  bool changed = false;
  copy_archive_editing(path, edited, "code/__torch__.py", [&](std::string& source) {
    const auto at = source.find("__parameters__ = [");
    if (at == std::string::npos) return;
    source[at + 6] = 'i';
    changed = true;
  });
  ASSERT_TRUE(changed);
  const auto problem = find_archive_problem(edited);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("code/__torch__.py"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("line 2 ('  __paraieters__"), std::string::npos) << *problem;
  NPE_EXPECT_THROW_WITH(load_checkpoint(edited), CheckpointError, "not a plain declaration");
  // The same archive unedited, rewritten the same way, still loads: the copy is faithful.
  copy_archive_editing(path, edited, "code/__torch__.py", [](std::string&) {});
  EXPECT_NO_THROW(load_checkpoint(edited));
}

// A checkpoint_archive regression input (tests/fuzz/regressions) that load_checkpoint must now
// refuse with `message`.
void expect_refused_regression(const std::string& input_name, const std::string& message) {
  const fs::path input = fs::path(NPE_FUZZ_REGRESSIONS_DIR) / "checkpoint_archive" / input_name;
  ASSERT_TRUE(fs::exists(input)) << input;
  NPE_EXPECT_THROW_WITH(load_checkpoint(input), CheckpointError, message);
}

TEST_F(ArchiveGuard, ARecordMarkedAsAFolderIsRefused) {
  // miniz reads a record whose external attributes have the MS-DOS folder bit as a folder and
  // extracts nothing, and libtorch hands out uninitialised memory as its bytes.
  rewrite("/version", kCentralExternalAttributes, 0, 0x10, 4);
  // (libtorch names the records' folder "archive" when it writes through a function, as
  // save_checkpoint does; older checkpoints carry their file's name.)
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError,
                        "a record 'archive/version' marked as a folder");
  // fuzz_checkpoint_archive's input: external attributes "uilt" (0x746c6975) on the version
  // record; libtorch read garbage as the version and leaked its reader.
  expect_refused_regression(
      "fuzz_checkpoint_archive-leak-version-marked-as-folder-"
      "851dfe1f87a78ed673ed691a3001fcae2bdfb43f",
      "seed-cnp.pt/version' marked as a folder");
}

TEST_F(ArchiveGuard, TwoRecordsWhoseNamesAreEqualIgnoringCaseAreRefused) {
  // miniz finds records by name ignoring case, so which of the two libtorch read was up to its
  // search (fuzz_checkpoint_archive's input below had two code records of one name).
  const auto edited = dir / "edited.pt";
  for (const std::string duplicate : {"data/0", "DATA/0"}) {
    copy_archive_editing(
        path, edited, "", [](std::string&) {},
        [&](std::string& name) {
          if (name.size() >= 7 && name.compare(name.size() - 7, 7, "/data/1") == 0)
            name = name.substr(0, name.size() - 6) + duplicate;
        });
    const auto problem = find_unsupported_layout(edited);
    ASSERT_TRUE(problem.has_value()) << duplicate;
    EXPECT_NE(problem->find("two records named 'archive/"), std::string::npos) << *problem;
    NPE_EXPECT_THROW_WITH(load_checkpoint(edited), CheckpointError, "two records named");
  }
  expect_refused_regression(
      "fuzz_checkpoint_archive-crash-debug-record-text-index-"
      "0cb61e491fb02b0fae6f3555924ddfaab9cd2175",
      "two records named 'seed-cnp.pt/code/__torch__/___torch_mangle_19.py'");
}

TEST_F(ArchiveGuard, LibtorchIsGivenEveryRecordButTheDebugRecords) {
  // libtorch 1.13 reads a debug record only to format an error, and trusts the indices in it:
  // fuzz_checkpoint_archive's input above crashed it that way (SEGV while formatting the error),
  // and with the duplicate-name check disabled, loading from this copy instead made it a clean
  // refusal. The copy must otherwise be the archive itself.
  const std::string copy = archive_without_debug_records(path);
  const auto copied = dir / "copy.pt";
  std::ofstream(copied, std::ios::binary) << copy;
  caffe2::serialize::PyTorchStreamReader original(path.string()), without(copied.string());
  EXPECT_EQ(without.version(), original.version());
  size_t debug_records = 0;
  for (const auto& name : original.getAllRecords()) {
    if (name.size() > 10 && name.compare(name.size() - 10, 10, ".debug_pkl") == 0) {
      ++debug_records;
      EXPECT_FALSE(without.hasRecord(name)) << name;
      continue;
    }
    ASSERT_TRUE(without.hasRecord(name)) << name;
    const auto [data, size] = original.getRecord(name);
    const auto [copied_data, copied_size] = without.getRecord(name);
    EXPECT_EQ(std::string(static_cast<const char*>(data.get()), size),
              std::string(static_cast<const char*>(copied_data.get()), copied_size))
        << name;
  }
  EXPECT_GT(debug_records, 0u) << "a checkpoint as saved has debug records to leave out";
  EXPECT_EQ(without.getAllRecords().size() + debug_records, original.getAllRecords().size());
}

TEST_F(ArchiveGuard, ATorchScriptErrorIsQuotedByItsFirstLineWithText) {
  // libtorch's TorchScript errors start with a blank line; the message quoted only that, and
  // read "(cannot be read as a checkpoint archive: )". A declaration naming a class the archive
  // does not have passes the grammar and makes libtorch report one.
  const auto edited = dir / "edited.pt";
  copy_archive_editing(path, edited, "code/__torch__.py", [](std::string& source) {
    const auto at = source.find("= Tensor\n");
    ASSERT_NE(at, std::string::npos);
    source.replace(at, 8, "= __torch__.___torch_mangle_99.Module");
  });
  NPE_EXPECT_THROW_WITH(load_checkpoint(edited), CheckpointError,
                        "(cannot be read as a checkpoint archive: Unknown type name "
                        "'__torch__.___torch_mangle_99.Module':)");
}

// libtorch's reader refuses these in its constructor, leaking miniz's state each time (~1.7 KB;
// a long fuzz run grew by 177 MB over 197 k inputs): the guard refuses them first.
TEST_F(ArchiveGuard, AVersionRecordLibtorchWouldRefuseIsRefusedFirst) {
  const auto edited = dir / "edited.pt";
  const std::pair<std::string, std::string> cases[] = {
      {"99\n", "format version 99, which this libtorch reads from 1 to"},
      {"0\n", "format version 0,"},
      {"three\n", "not a version number that can be read"},
      {"3 4\n", "not a version number that can be read"},
      {"184467440737095516160\n", "not a version number that can be read"},
      {std::string(40, '3'), "not a version number that can be read"},
      {"", "not a version number that can be read"},
  };
  for (const auto& version_case : cases) {
    // Named, not a structured binding: clang 14 (C++17) cannot capture one in a lambda.
    const std::string& text = version_case.first;
    const std::string& message = version_case.second;
    copy_archive_editing(path, edited, "/version", [&](std::string& record) { record = text; });
    const auto problem = find_unsupported_layout(edited);
    ASSERT_TRUE(problem.has_value()) << text;
    EXPECT_NE(problem->find(message), std::string::npos) << *problem;
    NPE_EXPECT_THROW_WITH(load_checkpoint(edited), CheckpointError, message);
  }
  copy_archive_editing(path, edited, "/version", [](std::string& record) { record = "3\n"; });
  EXPECT_EQ(find_unsupported_layout(edited), std::nullopt);
  EXPECT_NO_THROW(load_checkpoint(edited));
}

TEST_F(ArchiveGuard, RecordsOutsideOneFolderOrWithoutAVersionAreRefusedFirst) {
  const auto edited = dir / "edited.pt";
  copy_archive_editing(
      path, edited, "", [](std::string&) {},
      [](std::string& name) { name = name.substr(name.rfind('/') + 1); });
  NPE_EXPECT_THROW_WITH(load_checkpoint(edited), CheckpointError, "outside the archive's folder");
  copy_archive_editing(
      path, edited, "", [](std::string&) {},
      [](std::string& name) {
        if (name.size() >= 8 && name.compare(name.size() - 8, 8, "/version") == 0) name += "s";
      });
  const auto problem = find_unsupported_layout(edited);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("no record "), std::string::npos) << *problem;
  EXPECT_NE(problem->find("/version"), std::string::npos) << *problem;
  NPE_EXPECT_THROW_WITH(load_checkpoint(edited), CheckpointError, "no record ");
}

TEST(ArchiveCode, EveryShippedCheckpointIsPlainDeclarations) {
  // All of them, the ERA5 ones with their optimiser state (Tuple[float, float], bool) included.
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(NPE_SHIPPED_MODELS_DIR)) {
    if (entry.path().extension() != ".pt") continue;
    EXPECT_EQ(find_archive_problem(entry.path()), std::nullopt) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(ArchiveCode, DeclarationsPassAndAnythingElseNamesItsLine) {
  const std::string declarations =
      "class Module(Module):\n"
      "  __parameters__ = [\"encoder.0.weight\", \"encoder.0.bias\", ]\n"
      "  __buffers__ = []\n"
      "  __annotations__ = []\n"
      "  npe_metadata : str\n"
      "  betas : Tuple[float, float]\n"
      "  maybe : Optional[List[Tensor]]\n"
      "  __annotations__[\"0\"] = __torch__.___torch_mangle_3.Module\n"
      "\n";
  EXPECT_EQ(find_disallowed_code(declarations, ArchiveCode::Declarations), std::nullopt);
  const auto refused = [&](const std::string& line) {
    return find_disallowed_code(declarations + line + "\n", ArchiveCode::Declarations);
  };
  for (const std::string line : {"  __paraieters__ = [\"w\", ]", "  w : Final[int] = 3",
                                 "  def __setstate__(self):", "  x : Tensor = 1",
                                 "  x : Dict[str, Tuple[List[Optional[Tuple[int]]]]]",
                                 "  x : Tuple[int", "  __annotations__[\"a b\"] = Tensor",
                                 "  x : Tensor ", "class Module(NamedTuple):", "import os"}) {
    const auto problem = refused(line);
    ASSERT_TRUE(problem.has_value()) << line;
    EXPECT_NE(problem->find("line 10"), std::string::npos) << *problem;
  }
  EXPECT_TRUE(find_disallowed_code("  x : Tensor\n", ArchiveCode::Declarations).has_value())
      << "a declaration outside a class";
}

TEST(ArchiveCode, OnlyTheConvertersForwardIsAllowedInAReferenceArchive) {
  const std::string converted =
      "class ReferenceStateDict(Module):\n"
      "  __parameters__ = []\n"
      "  tensors : Dict[str, Tensor]\n"
      "  def forward(self: __torch__.npe_convert.ReferenceStateDict) -> Dict[str, Tensor]:\n"
      "    return self.tensors\n";
  EXPECT_EQ(find_disallowed_code(converted, ArchiveCode::DeclarationsAndTensorsForward),
            std::nullopt);
  EXPECT_TRUE(find_disallowed_code(converted, ArchiveCode::Declarations).has_value());
  auto other_body = converted;
  other_body.replace(other_body.find("self.tensors\n"), 12, "self.origin");
  EXPECT_TRUE(
      find_disallowed_code(other_body, ArchiveCode::DeclarationsAndTensorsForward).has_value());
}

// Each pickle record (*.pkl) of a checkpoint_archive regression input, by the order of its zip
// directory, as the pickle guard judges it: the first problem found, or nothing.
std::optional<std::string> first_malformed_pickle(const std::string& input_name) {
  const fs::path input = fs::path(NPE_FUZZ_REGRESSIONS_DIR) / "checkpoint_archive" / input_name;
  std::unique_ptr<void, int (*)(unzFile)> zip(unzOpen64(input.c_str()), unzClose);
  if (!zip) return std::nullopt;
  for (int more = unzGoToFirstFile(zip.get()); more == UNZ_OK; more = unzGoToNextFile(zip.get())) {
    char name[512] = {};
    unz_file_info64 info{};
    if (unzGetCurrentFileInfo64(zip.get(), &info, name, sizeof name - 1, nullptr, 0, nullptr, 0) !=
            UNZ_OK ||
        std::string_view(name).substr(std::max<size_t>(std::strlen(name), 3) - 3) != "pkl" ||
        unzOpenCurrentFile(zip.get()) != UNZ_OK)
      continue;
    std::string data(info.uncompressed_size, '\0');
    const int got = unzReadCurrentFile(zip.get(), data.data(), static_cast<unsigned>(data.size()));
    unzCloseCurrentFile(zip.get());
    if (got != static_cast<int>(data.size())) continue;
    if (auto problem =
            find_malformed_pickle(reinterpret_cast<const uint8_t*>(data.data()), data.size()))
      return problem;
  }
  return std::nullopt;
}

// These two inputs also have two records of one name (the fuzzer copies records by name), which
// the layout check now refuses first; their pickles still show what the pickle guard is for.
void expect_duplicate_names_and_a_malformed_pickle(const std::string& input_name,
                                                   const std::string& pickle_problem) {
  expect_refused_regression(input_name, "two records named");
  const auto problem = first_malformed_pickle(input_name);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find(pickle_problem), std::string::npos) << *problem;
}

TEST(ArchiveCode, TheFuzzersMemoAfterAListIsRefused) {
  // fuzz_checkpoint_archive: a LONG_BINPUT of 2,306,081,099 after a LIST opcode, which the
  // pickle walk used to stop at; libtorch then asked for 36.9 GB.
  expect_duplicate_names_and_a_malformed_pickle(
      "fuzz_checkpoint_archive-oom-memo-after-list-07eb2cb48f64b8cb862ea49dfe33ff021a79ca4c",
      "memo index of 2306081099");
}

TEST(ArchiveCode, TheFuzzersBuildOnAnEmptyStackIsRefused) {
  expect_duplicate_names_and_a_malformed_pickle(
      "fuzz_checkpoint_archive-crash-build-on-empty-stack-3adec577f8f2d76de2106a94b29e1a44577e9c30",
      "takes more items than the stack holds");
}

TEST(ArchiveGuardTensors, AViewReachingPastItsStorageIsNamed) {
  // libtorch rebuilds a stored tensor from an offset, sizes and strides read from the pickle
  // and does not check them against the storage; the same state, made directly.
  auto tensor = torch::zeros({4});
  EXPECT_EQ(find_view_beyond_storage(tensor), std::nullopt);
  EXPECT_EQ(find_view_beyond_storage(torch::zeros({0})), std::nullopt);
  tensor.unsafeGetTensorImpl()->set_storage_offset(1);
  const auto shifted = find_view_beyond_storage(tensor);
  ASSERT_TRUE(shifted.has_value());
  EXPECT_NE(shifted->find("reaches 20 bytes into a stored record of 16"), std::string::npos)
      << *shifted;
  auto strided = torch::zeros({2, 2});
  const std::vector<int64_t> sizes{2, 2}, strides{int64_t{1} << 62, 1};
  strided.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(sizes),
                                                       c10::IntArrayRef(strides));
  EXPECT_TRUE(find_view_beyond_storage(strided).has_value()) << "a stride that overflows";
  EXPECT_TRUE(find_view_beyond_storage(torch::Tensor()).has_value());
}

TEST(ArchiveCode, TheFuzzersViewBeyondItsStorageIsRefused) {
  // fuzz_checkpoint_archive: a corrupt pickle rebuilt a weight as a view past its stored
  // record, and copying it into the model read out of bounds (SEGV).
  expect_refused_regression(
      "fuzz_checkpoint_archive-crash-view-beyond-storage-8824082a584eb4f324a2e7dad626e3d5d0ee757c",
      "bytes into a stored record of");
}

TEST(ArchiveCode, TheFuzzersCrashInputIsACheckpointErrorNow) {
  expect_refused_regression(
      "fuzz_checkpoint_archive-crash-9ad878f3645bbe8d1bf72c7172b2af087da1da4d",
      "not a plain declaration");
}

}  // namespace
}  // namespace npe
