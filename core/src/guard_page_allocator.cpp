#include "npe/guard_page_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include "npe/errors.h"

namespace npe {
namespace {

size_t page_size() {
  static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

size_t round_up(size_t n, size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// What a tensor's deleter needs to give its pages back, by its data pointer: libtorch's
// raw_allocate (workspaces of its kernels) requires the context to be the data pointer itself.
struct Mapping {
  void* base;
  size_t bytes;
};

std::mutex g_mappings_mutex;
std::unordered_map<void*, Mapping>& mappings() {
  static auto* map = new std::unordered_map<void*, Mapping>();  // outlives every tensor
  return *map;
}

void release(void* data) {
  if (data == nullptr) return;
  Mapping mapping{};
  {
    std::lock_guard lock(g_mappings_mutex);
    auto found = mappings().find(data);
    if (found == mappings().end()) return;
    mapping = found->second;
    mappings().erase(found);
  }
  ::munmap(mapping.base, mapping.bytes);
}

class GuardPageAllocator final : public c10::Allocator {
 public:
  explicit GuardPageAllocator(const GuardPageSettings& settings) : m_settings(settings) {}

  // libtorch 2.3 made allocate non-const; each version overrides the one it declares.
  c10::DataPtr allocate(size_t n) const { return allocate_guarded(n); }
  c10::DataPtr allocate(size_t n) { return allocate_guarded(n); }
  // Pure virtual from libtorch 2.3 on; an unused member before.
  void copy_data(void* dest, const void* src, std::size_t count) const {
    std::memcpy(dest, src, count);
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  const GuardPageSettings& settings() const { return m_settings; }

 private:
  c10::DataPtr allocate_guarded(size_t n) const {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (n == 0) return {nullptr, nullptr, &release, cpu};
    const size_t page = page_size();
    const size_t data_bytes = round_up(n, m_settings.alignment);
    const size_t data_pages = round_up(data_bytes, page) / page;
    const size_t bytes = (data_pages + 1) * page;
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TORCH_CHECK(base != MAP_FAILED, "guard-page allocator: cannot map ", bytes,
                " bytes: ", std::strerror(errno));
    auto* first = static_cast<char*>(base);
    char* guard = m_settings.guarded == GuardedEnd::kEnd ? first + data_pages * page : first;
    if (::mprotect(guard, page, PROT_NONE) != 0) {
      const int error = errno;
      ::munmap(base, bytes);
      TORCH_CHECK(false, "guard-page allocator: cannot protect a page: ", std::strerror(error),
                  " (raise vm.max_map_count: every tensor takes two mappings)");
    }
    char* data = m_settings.guarded == GuardedEnd::kEnd ? guard - data_bytes : first + page;
    {
      std::lock_guard lock(g_mappings_mutex);
      mappings().emplace(data, Mapping{base, bytes});
    }
    return {data, data, &release, cpu};
  }

  GuardPageSettings m_settings;
};

std::atomic<GuardPageAllocator*> g_installed{nullptr};

}  // namespace

std::optional<GuardPageSettings> guard_page_settings_from_env() {
  const char* where = std::getenv("NPE_GUARD_PAGES");
  if (where == nullptr || *where == '\0') return std::nullopt;
  GuardPageSettings settings;
  const std::string value = where;
  if (value == "end") {
    settings.guarded = GuardedEnd::kEnd;
  } else if (value == "start") {
    settings.guarded = GuardedEnd::kStart;
  } else {
    throw ConfigError("NPE_GUARD_PAGES=" + value + ": expected end or start");
  }
  if (const char* alignment = std::getenv("NPE_GUARD_PAGES_ALIGNMENT"); alignment && *alignment) {
    char* rest = nullptr;
    const unsigned long parsed = std::strtoul(alignment, &rest, 10);
    if (*rest != '\0' || parsed == 0 || (parsed & (parsed - 1)) != 0 || parsed > page_size()) {
      throw ConfigError(std::string("NPE_GUARD_PAGES_ALIGNMENT=") + alignment +
                        ": expected a power of two from 1 to the page size");
    }
    settings.alignment = parsed;
  }
  return settings;
}

void install_guard_page_allocator(const GuardPageSettings& settings) {
  // Never freed: tensors made with it may live until the process ends, and their deleters need
  // nothing from it, but libtorch keeps the pointer.
  auto* allocator = new GuardPageAllocator(settings);
  // Above the default allocator's priority (0), so that it is the one libtorch uses.
  c10::SetCPUAllocator(allocator, /*priority=*/100);
  g_installed = allocator;
}

std::string describe_guard_page_allocator() {
  const auto* installed = g_installed.load();
  if (installed == nullptr || c10::GetCPUAllocator() != installed) return {};
  const auto& s = installed->settings();
  return std::string("guard pages ") + (s.guarded == GuardedEnd::kEnd ? "after" : "before") +
         " every tensor (aligned to " + std::to_string(s.alignment) + " bytes)";
}

}  // namespace npe
