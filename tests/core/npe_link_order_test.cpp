// Programs that link core run the libstdc++ they were compiled against, not the copies of it
// that PyTorch's wheels export (pytorch/pytorch#133437; core/CMakeLists.txt names libstdc++ first
// on the link line). Under PyTorch 2.11, with libtorch first in the load order, every test that
// removed its temporary folder died in libtorch's std::filesystem::remove_all, a jump to 0.

#include <dlfcn.h>

#include <string>

#include <gtest/gtest.h>

namespace {

// The symbol a call of std::filesystem::remove_all(path, error_code&) binds to, in this
// program's ABI.
#if _GLIBCXX_USE_CXX11_ABI
constexpr const char* kRemoveAll =
    "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code";
#else
constexpr const char* kRemoveAll = "_ZNSt10filesystem10remove_allERKNS_4pathERSt10error_code";
#endif

// RTLD_DEFAULT looks the name up in the program's load order, as the dynamic linker resolved the
// program's own calls: the first library that defines it wins.
TEST(LinkOrder, StdFilesystemBindsToLibstdcxx) {
  void* bound = dlsym(RTLD_DEFAULT, kRemoveAll);
  ASSERT_NE(bound, nullptr) << kRemoveAll << " is not defined by any loaded library";
  Dl_info where{};
  ASSERT_NE(dladdr(bound, &where), 0);
  ASSERT_NE(where.dli_fname, nullptr);
  EXPECT_NE(std::string(where.dli_fname).find("libstdc++"), std::string::npos)
      << "std::filesystem::remove_all binds to " << where.dli_fname;
}

}  // namespace
