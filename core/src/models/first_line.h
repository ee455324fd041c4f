#pragma once
// libtorch's messages run to many lines: a backtrace, or the TorchScript code around an error,
// which starts after a blank line. Errors shown to the user quote the first line with text.

#include <string>

namespace npe {

inline std::string first_line(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  const auto end = text.find_first_of("\r\n", begin);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace npe
