# moc reads every header a Q_OBJECT header includes, to learn the macros in scope; through
# <torch/types.h> that is most of libtorch, about 20 s of moc per header (Debian 12's Qt 6.4,
# measured 2026-12-07: 20.3 s with it, 0.6 s without, and the same output), minutes of every clean
# build spent before the widgets compile a line. moc needs nothing from libtorch, so the project's
# Qt targets run moc through a wrapper that puts a folder of empty stand-ins for the libtorch
# headers the sources include ahead of the real ones. The compilers still see libtorch itself.

# The libtorch headers named in #include lines of the sources moc reads.
function(npe_collect_libtorch_includes out_var)
  set(headers "")
  foreach(folder core/include widgets app tests)
    file(GLOB_RECURSE sources "${PROJECT_SOURCE_DIR}/${folder}/*.h"
         "${PROJECT_SOURCE_DIR}/${folder}/*.cpp")
    foreach(source ${sources})
      file(STRINGS "${source}" lines REGEX "^#include <(torch|ATen|c10|caffe2)/")
      foreach(line ${lines})
        string(REGEX REPLACE "^#include <([^>]+)>.*" "\\1" header "${line}")
        list(APPEND headers "${header}")
      endforeach()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES headers)
  set(${out_var} ${headers} PARENT_SCOPE)
endfunction()

# Sets AUTOMOC_EXECUTABLE of every target under `directory` that runs AUTOMOC to the wrapper.
function(npe_use_moc_wrapper directory wrapper)
  get_property(targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(automoc ${target} AUTOMOC)
    if(automoc)
      set_target_properties(${target} PROPERTIES AUTOMOC_EXECUTABLE "${wrapper}")
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory ${subdirectories})
    npe_use_moc_wrapper("${subdirectory}" "${wrapper}")
  endforeach()
endfunction()

# Call once, after every Qt target is defined.
function(npe_moc_without_libtorch)
  get_target_property(real_moc Qt6::moc LOCATION)
  if(NOT real_moc OR CMAKE_HOST_WIN32)
    return()
  endif()
  set(root "${PROJECT_BINARY_DIR}/moc-without-libtorch")
  npe_collect_libtorch_includes(headers)
  # Written only when missing or changed: a newer stand-in would make every moc run again.
  foreach(header ${headers})
    if(NOT EXISTS "${root}/include/${header}")
      file(WRITE "${root}/include/${header}" "")
    endif()
  endforeach()
  file(CONFIGURE OUTPUT "${root}/moc"
       CONTENT "#!/bin/sh\nexec '${real_moc}' -I'${root}/include' \"$@\"\n" @ONLY)
  file(CHMOD "${root}/moc" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
       GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  npe_use_moc_wrapper("${PROJECT_SOURCE_DIR}" "${root}/moc")
endfunction()
