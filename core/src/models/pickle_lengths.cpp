#include "models/pickle_lengths.h"

#include <cstring>

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

}  // namespace

std::optional<std::string> find_impossible_pickle_length(const uint8_t* data, size_t size) {
  size_t at = 0;
  while (at < size) {
    const uint8_t op = data[at++];
    if (op == '.') return std::nullopt;  // STOP
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
    // Every opcode of libtorch's PickleOpCode is known above, so libtorch's unpickler cannot
    // read past this walk: it refuses this byte too ("unknown opcode").
    if (fixed < 0) return std::nullopt;
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
