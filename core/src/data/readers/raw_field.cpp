#include "data/readers/raw_field.h"

#include <cstring>

#include <torch/torch.h>

#include "data/readers/readers.h"
#include "npe/errors.h"

namespace npe::readers {
namespace {

// The child's RawField travels to the parent as bytes: lengths, then contents, in the order
// of the struct (both sides are the same build on the same machine).
template <typename T>
void put(std::string& out, const std::vector<T>& values) {
  const std::uint64_t size = values.size();
  out.append(reinterpret_cast<const char*>(&size), sizeof size);
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}
void put(std::string& out, const std::string& text) {
  put(out, std::vector<char>(text.begin(), text.end()));
}

std::string serialise(const RawField& raw) {
  std::string out;
  out.reserve(raw.values.size() * sizeof(double) + 4096);
  put(out, raw.variable);
  put(out, raw.units);
  put(out, raw.long_name);
  put(out, raw.shape);
  put(out, raw.axes);
  put(out, raw.values);
  put(out, raw.valid_times);
  put(out, raw.latitudes);
  put(out, raw.longitudes);
  put(out, std::vector<char>{raw.variable_chosen});
  put(out, std::vector<std::uint64_t>{raw.file_variables.size()});
  for (const auto& v : raw.file_variables) {
    put(out, v.name);
    put(out, v.long_name);
    put(out, v.units);
  }
  return out;
}

class Bytes {
 public:
  Bytes(const std::string& bytes, const std::filesystem::path& path)
      : m_bytes(bytes), m_path(path) {}
  template <typename T>
  std::vector<T> vector() {
    std::uint64_t size = 0;
    take(&size, sizeof size);
    if (size > (m_bytes.size() - m_at) / sizeof(T)) broken();
    std::vector<T> values(size);
    take(values.data(), size * sizeof(T));
    return values;
  }
  std::string text() {
    const auto chars = vector<char>();
    return {chars.begin(), chars.end()};
  }
  bool at_end() const { return m_at == m_bytes.size(); }
  [[noreturn]] void broken() const {
    fail(m_path, "the child process that read the file sent a malformed result");
  }

 private:
  void take(void* to, size_t size) {
    if (size > m_bytes.size() - m_at) broken();
    if (size == 0) return;  // `to` may be an empty vector's null data()
    std::memcpy(to, m_bytes.data() + m_at, size);
    m_at += size;
  }
  const std::string& m_bytes;
  const std::filesystem::path& m_path;
  size_t m_at = 0;
};

RawField deserialise(const std::string& bytes, const std::filesystem::path& path) {
  Bytes in(bytes, path);
  RawField raw;
  raw.variable = in.text();
  raw.units = in.text();
  raw.long_name = in.text();
  raw.shape = in.vector<int64_t>();
  raw.axes = in.vector<int64_t>();
  raw.values = in.vector<double>();
  raw.valid_times = in.vector<int64_t>();
  raw.latitudes = in.vector<double>();
  raw.longitudes = in.vector<double>();
  const auto chosen = in.vector<char>();
  if (chosen.size() != 1) in.broken();
  raw.variable_chosen = chosen[0] != 0;
  const auto variables = in.vector<std::uint64_t>();
  if (variables.size() != 1) in.broken();
  for (std::uint64_t i = 0; i < variables[0]; ++i) {
    GriddedVariable v;
    v.name = in.text();
    v.long_name = in.text();
    v.units = in.text();
    raw.file_variables.push_back(std::move(v));
  }
  int64_t count = 1;
  for (int64_t length : raw.shape) count *= length;
  if (!in.at_end() || raw.shape.size() != 3 || raw.axes.size() != 3 ||
      count != static_cast<int64_t>(raw.values.size()))
    in.broken();
  return raw;
}

}  // namespace

GriddedField to_field(RawField raw, const std::filesystem::path& path) {
  GriddedField field;
  field.source = path;
  field.variable = std::move(raw.variable);
  field.units = std::move(raw.units);
  field.long_name = std::move(raw.long_name);
  field.valid_times = std::move(raw.valid_times);
  field.latitudes = std::move(raw.latitudes);
  field.longitudes = std::move(raw.longitudes);
  field.file_variables = std::move(raw.file_variables);
  field.variable_chosen = raw.variable_chosen;
  field.values =
      torch::from_blob(raw.values.data(), raw.shape, torch::kFloat64).clone().permute(raw.axes);
  normalise_layout(field);
  return field;
}

RawField read_in_child(const std::filesystem::path& path, const GriddedReadOptions& options,
                       const std::string& library,
                       const std::function<RawField(ChildChannel&)>& read) {
  try {
    const auto bytes =
        run_in_child([&](ChildChannel& channel) { channel.result(serialise(read(channel))); },
                     options.stall_limit);
    return deserialise(bytes, path);
  } catch (const ChildFailure& failure) {
    if (failure.kind == ChildFailure::Kind::Error) throw DataError(failure.message);
    // A crash is a signal in a plain build and exit status 1 under AddressSanitizer, which
    // catches the signal and reports it: both read "failed on this file".
    fail(path, library + " failed on this file (" + failure.message + "); it is likely corrupt");
  }
}

}  // namespace npe::readers
