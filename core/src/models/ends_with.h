#pragma once
// Whether a text (a record name in a checkpoint archive, say) ends with a suffix:
// std::string::ends_with is C++20. One definition for core: it builds in unity batches, where
// file-local copies would meet and overload each other.

#include <string_view>

namespace npe {

inline bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace npe
