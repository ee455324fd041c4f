// The main of the GoogleTest suites: the process is set up as npe and np-explorer set theirs
// (glibc's allocator keeps freed memory instead of returning every large tensor to the kernel,
// npe::configure_allocator), so a suite measures and exercises the library as the programs run it.
// Without it, a test that allocates hundreds of MiB per step spends most of its time in page
// faults on virtual machines.

#include <gtest/gtest.h>

#include "npe/blas_kernels.h"
#include "npe/runtime.h"

int main(int argc, char** argv) {
  // The BLAS kernels the programs run (npe/blas_kernels.h), before anything else.
  npe::use_the_cpus_blas_kernels(argv);
  npe::configure_allocator();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
