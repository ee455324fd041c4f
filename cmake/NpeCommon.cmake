# One INTERFACE target carries the language standard and warnings for every project target,
# so nothing is set globally through CMAKE_CXX_FLAGS.
add_library(npe_options INTERFACE)
target_compile_features(npe_options INTERFACE cxx_std_17)
target_compile_options(npe_options INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-unused-parameter>
  # A precompiled header gcc refuses (a target's definitions differ from the header's) makes
  # every unit of that target compile libtorch's headers again, minutes in all, with only a
  # warning: make it an error, so that the build says which usage requirement broke it.
  $<$<CXX_COMPILER_ID:GNU>:-Werror=invalid-pch>)
set(CMAKE_CXX_EXTENSIONS OFF)

# Where shipped pretrained models and data are looked up at run time (after the source tree).
set(NPE_INSTALL_SHARE_DIR "${CMAKE_INSTALL_FULL_DATADIR}/np-explorer")

# Sanitizer build of every target (e.g. -DNPE_SANITIZE=address,undefined, or the "sanitize"
# preset): undefined behaviour aborts the test that hits it instead of only printing.
set(NPE_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined")
if(NPE_SANITIZE)
  target_compile_options(npe_options INTERFACE -fsanitize=${NPE_SANITIZE} -fno-omit-frame-pointer
                                               -fno-sanitize-recover=all)
  target_link_options(npe_options INTERFACE -fsanitize=${NPE_SANITIZE})
endif()

# Fuzzing build (-DNPE_FUZZ=ON, clang only; the "fuzz" preset): coverage instrumentation for
# libFuzzer plus AddressSanitizer and UndefinedBehaviorSanitizer on every target; the fuzz
# targets in tests/fuzz link libFuzzer's main.
option(NPE_FUZZ "Build the libFuzzer targets of tests/fuzz (clang)" OFF)
if(NPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NPE_FUZZ needs clang: CC=clang CXX=clang++ cmake ... (or the fuzz preset)")
  endif()
  target_compile_options(npe_options INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                                               -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(npe_options INTERFACE -fsanitize=address,undefined)
endif()

# Unity builds of the libraries and the core tests. Every translation unit that sees libtorch
# spends about ten seconds loading the precompiled header (600-800 MB) before it compiles a line
# of its own, so these targets compile their sources in batches (BENCHMARKS.md, "Build time": with
# the other changes there, a clean build on two cores takes a third of the time it took).
# -DNPE_UNITY_BUILD=OFF compiles one file per unit, for editing one file over and over or for
# clang-tidy. Batches of 16 suit two cores; a machine with many cores builds sooner with smaller
# batches, which give it more units to run side by side (-DNPE_UNITY_BATCH_SIZE=4 on 16 cores).
option(NPE_UNITY_BUILD "Compile the libraries' sources in batches (much faster clean builds)" ON)
set(NPE_UNITY_BATCH_SIZE 16 CACHE STRING "Sources per unity-build unit")
function(npe_unity_build target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${NPE_UNITY_BUILD}
                                             UNITY_BUILD_BATCH_SIZE ${NPE_UNITY_BATCH_SIZE})
endfunction()

# AUTOMOC compiles <target>_autogen/mocs_compilation.cpp in every Qt target. Where the sources
# include their moc output themselves (the GUI tests' "name.moc") that file is empty, yet with a
# precompiled header it would load it all the same.
function(npe_skip_pch_of_empty_mocs target)
  get_target_property(binary_dir ${target} BINARY_DIR)
  set_source_files_properties("${binary_dir}/${target}_autogen/mocs_compilation.cpp"
    TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
