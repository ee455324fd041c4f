#pragma once
// The loaders read files by path, as the programs do; each fuzz input is written to one scratch
// file per process (in $TMPDIR, ideally a tmpfs) and read back through the real code path.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace npe::fuzz {

class ScratchFile {
 public:
  /// `suffix` matters to loaders that decide by extension (".gz").
  explicit ScratchFile(const std::string& suffix)
      : m_path(std::filesystem::temp_directory_path() /
               ("npe-fuzz-" + std::to_string(::getpid()) + suffix)) {}
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(m_path, ec);
  }
  const std::filesystem::path& path() const { return m_path; }
  const std::filesystem::path& write(const uint8_t* data, size_t size) {
    std::FILE* f = std::fopen(m_path.c_str(), "wb");
    if (f) {
      if (size) std::fwrite(data, 1, size, f);
      std::fclose(f);
    }
    return m_path;
  }

 private:
  std::filesystem::path m_path;
};

}  // namespace npe::fuzz
