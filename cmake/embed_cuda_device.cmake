# Writes the CUDA prelude, the text every generated kernel starts with, as a C++ source defining
# kiln::cuda::cuda_prelude(): the device library's .cuh files in the order given, separated by a
# blank line, then the prelude's closing line. Run by the build (src/CMakeLists.txt), so that a
# changed .cuh rebuilds the library, in kiln's own tree as in a consumer's.
#   cmake -DDEVICE_DIR=<folder of the .cuh files> -DFILES=<names without .cuh, ;-separated>
#         -DOUTPUT=<the .cpp to write> [-DFUNCTION=<name, cuda_prelude by default>]
#         [-DCLOSING=<its last line's words, "end of the kiln prelude" by default>] -P embed_cuda_device.cmake
# (FUNCTION and CLOSING embed a part appended to the prelude for some kernels only: hopper.cuh.)
#
# Each .cuh also compiles on its own (tests/backends/cuda/device_library_test.cpp), so it holds
# `#pragma once` and includes the device files it needs; in the prelude they come earlier, and
# those lines are dropped. Any other #include stops the build: the prelude declares what it uses
# itself (no toolkit header), so that a kernel compiles wherever NVRTC loads.
cmake_minimum_required(VERSION 3.21)
foreach(var DEVICE_DIR FILES OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_cuda_device.cmake: ${var} is not set")
  endif()
endforeach()

if(NOT DEFINED FUNCTION)
  set(FUNCTION cuda_prelude)
endif()
if(NOT DEFINED CLOSING)
  set(CLOSING "end of the kiln prelude")
endif()

# The raw-string delimiter; a file that contains it cannot be embedded as it is.
set(delimiter "kiln_cuh")
set(body "")
set(first TRUE)
foreach(name IN LISTS FILES)
  set(path "${DEVICE_DIR}/${name}.cuh")
  file(READ "${path}" text)
  if(NOT text MATCHES "\n$")
    message(FATAL_ERROR "${path}: the last line must end with a newline (files are joined by lines)")
  endif()
  # The lines only a file compiled on its own needs (never its first line, which says what it holds).
  string(REGEX REPLACE "\n(#pragma once\n)+" "\n" text "${text}")
  string(REGEX REPLACE "\n(#include \"[a-z0-9_]+\\.cuh\"\n)+" "\n" text "${text}")
  if(text MATCHES "(^|\n)[ \t]*#[ \t]*include[^\n]*")
    string(STRIP "${CMAKE_MATCH_0}" line)
    message(FATAL_ERROR "${path}: '${line}': the prelude includes no header (it must compile wherever NVRTC "
                        "loads, without a toolkit); declare what is needed, or include another device "
                        "file as #include \"NAME.cuh\" on a line of its own")
  endif()
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains ')${delimiter}\"', the delimiter of the embedded text")
  endif()
  if(NOT first)
    string(APPEND body "    \"\\n\"\n")
  endif()
  set(first FALSE)
  string(APPEND body "    // ${name}.cuh\n    R\"${delimiter}(${text})${delimiter}\"\n")
endforeach()

set(source "// Generated from the CUDA device library (src/backends/cuda/device) by
// cmake/embed_cuda_device.cmake; edit the .cuh files, not this file.
#include <string_view>

#include \"backends/cuda/target.h\"

namespace kiln::cuda {

std::string_view ${FUNCTION}() {
  static constexpr char text[] =
${body}    \"// ---- ${CLOSING} ----\\n\";
  return std::string_view(text, sizeof(text) - 1);
}

}  // namespace kiln::cuda
")
file(WRITE "${OUTPUT}" "${source}")
