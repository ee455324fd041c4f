#include "pickle_guard.h"

#include <cstring>
#include <vector>

namespace npe {
namespace {

uint64_t little_endian(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

// Opcodes followed by a fixed number of argument bytes.
int fixed_argument_bytes(uint8_t op) {
  switch (op) {
    case 'K':
    case 'q':
    case 'h':
    case 0x80:
    case 0x82:  // BININT1, BINPUT, BINGET, PROTO, EXT1
      return 1;
    case 'M':
    case 0x83:  // BININT2, EXT2
      return 2;
    case 'J':
    case 'r':
    case 'j':
    case 0x84:  // BININT, LONG_BINPUT, LONG_BINGET, EXT4
      return 4;
    case 'G':
    case 0x95:  // BINFLOAT, FRAME
      return 8;
    case '(':
    case ')':
    case ']':
    case '}':
    case 'a':
    case 'e':
    case 's':
    case 'u':
    case 't':
    case 0x85:
    case 0x86:
    case 0x87:
    case 'N':
    case 0x88:
    case 0x89:
    case 'R':
    case 'b':
    case 0x81:
    case 'Q':
    case 0x94:
    case 0x8f:
    case 0x90:
    case 0x91:
    case '0':
    case '1':
    case '2':
    case 'l':
    case 'd':
    case 'o':
    case 0x92:
    case 0x93:
      return 0;  // MARK ... POP, DUP, LIST, DICT, OBJ, NEWOBJ_EX, STACK_GLOBAL: no argument
    default:
      return -1;
  }
}

// Protocol 0's opcodes: followed by this many lines of text, each ending in a newline.
int text_lines(uint8_t op) {
  switch (op) {
    case 'F':
    case 'I':
    case 'L':
    case 'P':
    case 'S':
    case 'V':
    case 'g':
    case 'p':  // FLOAT, INT, LONG, PERSID, STRING, UNICODE, GET, PUT
      return 1;
    case 'c':
    case 'i':  // GLOBAL, INST: module and name
      return 2;
    default:
      return 0;
  }
}

// Opcodes followed by a length of this many bytes, then that many bytes.
int length_prefix_bytes(uint8_t op) {
  switch (op) {
    case 'C':
    case 'U':
    case 0x8a:
    case 0x8c:  // SHORT_BINBYTES, SHORT_BINSTRING, LONG1, SHORT_BINUNICODE
      return 1;
    case 'X':
    case 'B':
    case 'T':
    case 0x8b:  // BINUNICODE, BINBYTES, BINSTRING, LONG4
      return 4;
    case 0x8d:
    case 0x8e:  // BINUNICODE8, BINBYTES8
      return 8;
    default:
      return 0;
  }
}

// What an opcode does to the unpickler's stack, in items: libtorch 1.13 pops without checking
// that the items are there (BUILD as a pickle's first opcode read before the stack's start and
// crashed; found by fuzz_checkpoint_archive), so every pop is checked here first.
struct StackEffect {
  int pops = 0;          ///< items taken from above the last mark (which must hold them)
  int pushes = 0;        ///< items put back
  bool to_mark = false;  ///< takes everything down to the last mark, and the mark
  int below_mark = 0;    ///< with to_mark: items that must lie below the mark (a list to extend)
  bool mark = false;     ///< MARK
};

StackEffect stack_effect(uint8_t op) {
  switch (op) {
    case '(':
      return {0, 0, false, 0, true};
    case '0':  // POP
      return {1, 0};
    case '1':  // POP_MARK
      return {0, 0, true};
    case '2':  // DUP
      return {1, 2};
    case 'Q':
    case 0x85:  // BINPERSID, TUPLE1
      return {1, 1};
    case 'R':
    case 'b':
    case 0x93:
    case 0x81:
    case 0x86:  // REDUCE, BUILD, STACK_GLOBAL, NEWOBJ, TUPLE2
      return {2, 1};
    case 0x87:
    case 0x92:  // TUPLE3, NEWOBJ_EX
      return {3, 1};
    case 'a':  // APPEND: the list stays
      return {2, 1};
    case 's':  // SETITEM: the dict stays
      return {3, 1};
    case 'q':
    case 'r':
    case 'p':
    case 0x94:  // the PUTs and MEMOIZE read the top item
      return {1, 1};
    case 'd':
    case 'l':
    case 't':
    case 'i':
    case 'o':
    case 0x91:  // DICT, LIST, TUPLE, INST, OBJ, FROZENSET
      return {0, 1, true};
    case 'e':
    case 'u':
    case 0x90:  // APPENDS, SETITEMS, ADDITEMS: into the container below the mark
      return {0, 0, true, 1};
    case 0x80:
    case 0x95:
    case '.':  // PROTO, FRAME, STOP
      return {};
    default:  // every other opcode pushes one item (a value, a GET, a GLOBAL)
      return {0, 1};
  }
}

/// The depth of the unpickler's stack and of its marks, opcode by opcode.
class StackDepth {
 public:
  bool empty() const { return m_depth == 0; }

  std::optional<std::string> apply(uint8_t op, size_t at) {
    const auto effect = stack_effect(op);
    if (effect.mark) {
      m_marks.push_back(m_depth);
      return std::nullopt;
    }
    const size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (effect.to_mark) {
      if (m_marks.empty()) return problem(op, at, "needs a MARK that is not there");
      m_depth = floor;
      m_marks.pop_back();
      if (m_depth < size_t(effect.below_mark))
        return problem(op, at, "adds to a container that is not there");
    } else if (m_depth < floor + effect.pops) {
      return problem(op, at, "takes more items than the stack holds");
    } else {
      m_depth -= effect.pops;
    }
    m_depth += effect.pushes;
    return std::nullopt;
  }

 private:
  static std::string problem(uint8_t op, size_t at, const std::string& what) {
    return "an opcode 0x" + hex(op) + " at byte " + std::to_string(at) + " that " + what;
  }
  static std::string hex(uint8_t value) {
    const char* digits = "0123456789abcdef";
    return {digits[value >> 4], digits[value & 15]};
  }

  size_t m_depth = 0;
  std::vector<size_t> m_marks;
};

}  // namespace

std::optional<std::string> find_malformed_pickle(const uint8_t* data, size_t size) {
  size_t at = 0;
  StackDepth stack;
  while (at < size) {
    const size_t op_at = at;
    const uint8_t op = data[at++];
    if (op == '.') {  // STOP: the unpickled value is the item on the stack
      if (stack.empty())
        return "a STOP at byte " + std::to_string(op_at) + " with nothing to return";
      return std::nullopt;
    }
    // Every opcode of libtorch's PickleOpCode is known here, so libtorch's unpickler cannot
    // read past this walk: it refuses any other byte too ("unknown opcode").
    if (fixed_argument_bytes(op) < 0 && length_prefix_bytes(op) == 0 && text_lines(op) == 0)
      return std::nullopt;
    if (auto problem = stack.apply(op, op_at)) return problem;
    const size_t remaining = size - at;
    if (const int prefix = length_prefix_bytes(op); prefix > 0) {
      if (remaining < size_t(prefix)) return "a length cut off at byte " + std::to_string(at);
      const uint64_t length = little_endian(data + at, prefix);
      at += prefix;
      if (length > size - at) {
        return "a string of " + std::to_string(length) + " bytes at byte " + std::to_string(at) +
               " where only " + std::to_string(size - at) + " remain";
      }
      at += length;
      continue;
    }
    if (const int lines = text_lines(op); lines > 0) {
      const size_t text_start = at;
      for (int line = 0; line < lines; ++line) {
        const void* end = std::memchr(data + at, '\n', size - at);
        if (!end) return "an unterminated text argument at byte " + std::to_string(at);
        at = static_cast<size_t>(static_cast<const uint8_t*>(end) - data) + 1;
      }
      // PUT: a memo index in decimal, held to the same bound as BINPUT's below.
      if (op == 'p') {
        uint64_t index = 0;
        for (size_t i = text_start; i + 1 < at && index <= size; ++i)
          index = index * 10 +
                  static_cast<uint64_t>(data[i] >= '0' && data[i] <= '9' ? data[i] - '0' : 0);
        if (index > size) {
          return "a memo index above " + std::to_string(size) + " at byte " +
                 std::to_string(text_start) + " in a pickle of " + std::to_string(size) + " bytes";
        }
      }
      continue;
    }
    const int fixed = fixed_argument_bytes(op);
    if (remaining < size_t(fixed)) return "an argument cut off at byte " + std::to_string(at);
    if (op == 'q' || op == 'r') {  // BINPUT, LONG_BINPUT: libtorch grows its memo to the index
      // Writers number memo entries from 0, each PUT costing at least 2 bytes, so no real
      // pickle holds an index above its own size (a corrupt one asked for 29.6 GB).
      const uint64_t index = little_endian(data + at, fixed);
      if (index > size) {
        return "a memo index of " + std::to_string(index) + " at byte " + std::to_string(at) +
               " in a pickle of " + std::to_string(size) + " bytes";
      }
    }
    at += fixed;
  }
  return std::nullopt;
}

}  // namespace npe
