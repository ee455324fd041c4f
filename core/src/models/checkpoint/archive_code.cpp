#include "archive_code.h"

#include <array>
#include <cctype>

namespace npe {
namespace {

// The grammar, one line at a time (libtorch writes two-space indents and ", " separators):
//   class IDENT(Module):
//     __parameters__ = NAMES          NAMES: ["a.weight", "a.bias", ] or []
//     __buffers__ = NAMES
//     __annotations__ = []
//     __annotations__["NAME"] = TYPE   (attributes whose names are not identifiers: "0")
//     IDENT : TYPE
// TYPE is Tensor, int, float, bool, str, __torch__.PATH, or Tuple/List/Optional/Dict of TYPEs.
constexpr std::array<std::string_view, 5> kPlainTypes{"Tensor", "int", "float", "bool", "str"};
constexpr std::array<std::string_view, 4> kGenericTypes{"Tuple", "List", "Optional", "Dict"};
// Deeper than any type libtorch writes for a module's state (Optional[Tuple[float, float]]).
constexpr int kMaxTypeDepth = 4;

bool is_identifier_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// One line, read left to right; every method consumes on success only.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : m_rest(line) {}

  bool at_end() const { return m_rest.empty(); }

  bool take(std::string_view literal) {
    if (m_rest.substr(0, literal.size()) != literal) return false;
    m_rest.remove_prefix(literal.size());
    return true;
  }

  std::optional<std::string_view> identifier() {
    if (m_rest.empty() || !is_identifier_start(m_rest[0])) return std::nullopt;
    size_t length = 1;
    while (length < m_rest.size() && is_identifier_char(m_rest[length])) ++length;
    const auto name = m_rest.substr(0, length);
    m_rest.remove_prefix(length);
    return name;
  }

  /// "NAME" with NAME of identifier characters and dots (parameter paths such as "head.0.bias").
  bool quoted_name() {
    LineReader probe = *this;
    if (!probe.take("\"")) return false;
    size_t length = 0;
    while (length < probe.m_rest.size() &&
           (is_identifier_char(probe.m_rest[length]) || probe.m_rest[length] == '.' ||
            probe.m_rest[length] == '/'))
      ++length;
    if (length == 0) return false;
    probe.m_rest.remove_prefix(length);
    if (!probe.take("\"")) return false;
    *this = probe;
    return true;
  }

  /// ["a", "b", ] as libtorch writes it, or [].
  bool names() {
    LineReader probe = *this;
    if (!probe.take("[")) return false;
    while (!probe.take("]")) {
      if (!probe.quoted_name() || !probe.take(", ")) return false;
    }
    *this = probe;
    return true;
  }

  bool type(int depth = 0) {
    if (depth > kMaxTypeDepth) return false;
    LineReader probe = *this;
    const auto head = probe.identifier();
    if (!head) return false;
    if (*head == "__torch__") {
      // __torch__.PATH: a class of this archive (a submodule), named by its module path.
      int parts = 0;
      while (probe.take(".")) {
        if (!probe.identifier()) return false;
        ++parts;
      }
      if (parts == 0) return false;
    } else if (contains(kGenericTypes, *head)) {
      if (!probe.take("[") || !probe.type(depth + 1)) return false;
      while (probe.take(", ")) {
        if (!probe.type(depth + 1)) return false;
      }
      if (!probe.take("]")) return false;
    } else if (!contains(kPlainTypes, *head)) {
      return false;
    }
    *this = probe;
    return true;
  }

 private:
  template <size_t N>
  static bool contains(const std::array<std::string_view, N>& words, std::string_view word) {
    for (const auto w : words)
      if (w == word) return true;
    return false;
  }

  std::string_view m_rest;
};

bool is_dunder(std::string_view name) {
  return name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__";
}

bool is_class_line(std::string_view line) {
  LineReader r(line);
  return r.take("class ") && r.identifier() && r.take("(Module):") && r.at_end();
}

bool is_declaration(std::string_view line) {
  LineReader r(line);
  if (!r.take("  ")) return false;
  {
    LineReader list = r;
    if ((list.take("__parameters__ = ") || list.take("__buffers__ = ")) && list.names() &&
        list.at_end())
      return true;
  }
  {
    LineReader annotations = r;
    if (annotations.take("__annotations__")) {
      if (annotations.take(" = []")) return annotations.at_end();
      return annotations.take("[") && annotations.quoted_name() && annotations.take("] = ") &&
             annotations.type() && annotations.at_end();
    }
  }
  const auto name = r.identifier();
  return name && !is_dunder(*name) && r.take(" : ") && r.type() && r.at_end();
}

// npe-convert-reference's module: `def forward(self) -> Dict[str, Tensor]: return self.tensors`,
// as torch.jit.script writes it.
bool is_tensors_forward_header(std::string_view line) {
  LineReader r(line);
  return r.take("  def forward(self: ") && r.type() && r.take(") -> Dict[str, Tensor]:") &&
         r.at_end();
}
constexpr std::string_view kTensorsForwardBody = "    return self.tensors";

std::string describe(size_t line_number, std::string_view line) {
  constexpr size_t kShown = 60;
  std::string shown(line.substr(0, kShown));
  for (char& c : shown) {
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  }
  return "code that is not a plain declaration at line " + std::to_string(line_number) + " ('" +
         shown + (line.size() > kShown ? "...'" : "'") + ")";
}

}  // namespace

std::optional<std::string> find_disallowed_code(std::string_view source, ArchiveCode allowed) {
  bool in_class = false;
  size_t line_number = 0;
  while (!source.empty()) {
    const size_t end = source.find('\n');
    const auto line = source.substr(0, end);
    source.remove_prefix(end == std::string_view::npos ? source.size() : end + 1);
    ++line_number;
    if (line.empty()) continue;
    if (is_class_line(line)) {
      in_class = true;
      continue;
    }
    if (in_class && is_declaration(line)) continue;
    if (in_class && allowed == ArchiveCode::DeclarationsAndTensorsForward &&
        is_tensors_forward_header(line)) {
      const size_t body_end = source.find('\n');
      if (source.substr(0, body_end) == kTensorsForwardBody) {
        source.remove_prefix(body_end == std::string_view::npos ? source.size() : body_end + 1);
        ++line_number;
        continue;
      }
    }
    return describe(line_number, line);
  }
  return std::nullopt;
}

}  // namespace npe
