#include "maps/opengl_driver_pin.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang
#define NPE_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)  // GCC
#define NPE_ADDRESS_SANITIZER 1
#endif

#if defined(NPE_ADDRESS_SANITIZER) && defined(__linux__)
#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>
#endif

namespace npe::widgets {

void keepOpenGlDriverLoadedForLeakChecks() {
#if defined(NPE_ADDRESS_SANITIZER) && defined(__linux__)
  std::vector<std::string> drivers;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* found) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("_dri.so") != std::string::npos) {
          static_cast<std::vector<std::string>*>(found)->push_back(name);
        }
        return 0;
      },
      &drivers);
  // Outside the iteration, which holds the loader's lock. RTLD_NOLOAD: only a module already
  // loaded; RTLD_NODELETE: never unmapped. The handle is kept on purpose (never dlclose'd).
  for (const auto& driver : drivers) dlopen(driver.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#endif
}

}  // namespace npe::widgets
