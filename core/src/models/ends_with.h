#pragma once
// Whether a text (a record name in a checkpoint archive, say) ends with a suffix:
// std::string::ends_with is C++20. One definition for core, which is built in unity batches
// where two file-local copies ended up calling each other's.

#include <string_view>

namespace npe {

inline bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace npe
