# avgpool_find_optional(<Package> WHAT <text> DEBIAN <package>... [ARGS <find_package args>...])
#
# Finds an optional dependency in a way that nothing in its CMake files can
# stop this configure. A package's config may call find_package(<dep>
# REQUIRED) for a dependency of its own (Debian's oneDNN does so for
# OpenCL); QUIET on our call does not reach that inner call, and its failure
# would abort the whole configure. So the package is first loaded in a
# throw-away sub-configure (cmake/probe, well under a second); only when that
# succeeds is it loaded here.
#
# Sets <Package>_FOUND in the caller's scope (plus whatever the package
# sets). When the package is unusable: one status line with the reason and
# the Debian packages to install; an error instead when
# AVGPOOL_REQUIRE_OPTIONAL_DEPS is ON (CI: proves scripts/deps.sh installs
# every optional dependency). -DCMAKE_DISABLE_FIND_PACKAGE_<Package>=ON
# skips it on purpose (never an error).

set(_avgpool_probe_source "${CMAKE_CURRENT_LIST_DIR}/probe")

# Runs the probe for <name>; sets <out_ok> (TRUE/FALSE) and <out_reason>.
function(_avgpool_probe name out_ok out_reason)
  set(dir "${CMAKE_BINARY_DIR}/CMakeFiles/avgpool-probe-${name}")
  set(log "${CMAKE_BINARY_DIR}/CMakeFiles/avgpool-probe-${name}.log")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  # The settings that decide what find_package finds travel in an initial
  # cache (bracket arguments: lists and odd characters arrive unchanged).
  set(init "set(AVGPOOL_PROBE_PACKAGE [==[${name}]==] CACHE STRING \"\")\n")
  string(APPEND init "set(AVGPOOL_PROBE_ARGS [==[${ARGN}]==] CACHE STRING \"\")\n")
  get_cmake_property(vars VARIABLES)
  list(FILTER vars INCLUDE REGEX "^CMAKE_DISABLE_FIND_PACKAGE_")
  foreach(v IN LISTS vars ITEMS
      CMAKE_C_COMPILER CMAKE_CXX_COMPILER CMAKE_C_FLAGS CMAKE_CXX_FLAGS CMAKE_EXE_LINKER_FLAGS
      CMAKE_TOOLCHAIN_FILE CMAKE_PREFIX_PATH CMAKE_FIND_ROOT_PATH CMAKE_MODULE_PATH
      CMAKE_PROJECT_TOP_LEVEL_INCLUDES CMAKE_MAKE_PROGRAM ${name}_DIR ${name}_ROOT)
    if(DEFINED ${v})
      string(APPEND init "set(${v} [==[${${v}}]==] CACHE STRING \"\")\n")
    endif()
  endforeach()
  file(WRITE "${dir}/init.cmake" "${init}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -G "${CMAKE_GENERATOR}" -C "${dir}/init.cmake"
            -S "${_avgpool_probe_source}" -B "${dir}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  file(WRITE "${log}" "${out}")
  if(rc EQUAL 0)
    set(${out_ok} TRUE PARENT_SCOPE)
    set(${out_reason} "" PARENT_SCOPE)
    return()
  endif()
  # The first cause CMake names, in words a user can act on.
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
  if(flat MATCHES "CMAKE_DISABLE_FIND_PACKAGE_([A-Za-z0-9_]+) is enabled")
    set(reason "its CMake config needs ${CMAKE_MATCH_1}, which is disabled (CMAKE_DISABLE_FIND_PACKAGE_${CMAKE_MATCH_1})")
  elseif(flat MATCHES "Could not find a package configuration file provided by \"${name}\"" OR
         flat MATCHES "Could NOT find ${name} ")
    set(reason "not installed")
  elseif(flat MATCHES "Could NOT find ([A-Za-z0-9_]+) \\(([^)]*)\\)")
    set(reason "its CMake config needs ${CMAKE_MATCH_1}, which was not found (${CMAKE_MATCH_2})")
  elseif(flat MATCHES "Could not find a package configuration file provided by \"([A-Za-z0-9_]+)\"")
    set(reason "its CMake config needs ${CMAKE_MATCH_1}, which was not found")
  elseif(flat MATCHES "CMake Error at ([^ ]+)")
    set(reason "its CMake files failed at ${CMAKE_MATCH_1}")
  else()
    set(reason "the probe configure failed (exit ${rc})")
  endif()
  set(${out_ok} FALSE PARENT_SCOPE)
  set(${out_reason} "${reason}" PARENT_SCOPE)
endfunction()

macro(avgpool_find_optional _afo_name)
  cmake_parse_arguments(_afo "" "WHAT" "DEBIAN;ARGS" ${ARGN})
  set(${_afo_name}_FOUND FALSE)
  if(CMAKE_DISABLE_FIND_PACKAGE_${_afo_name})
    message(STATUS "${_afo_WHAT} skipped: CMAKE_DISABLE_FIND_PACKAGE_${_afo_name} is ON")
  else()
    _avgpool_probe(${_afo_name} _afo_ok _afo_reason ${_afo_ARGS})
    if(_afo_ok)
      find_package(${_afo_name} ${_afo_ARGS} QUIET)
      if(NOT ${_afo_name}_FOUND)
        set(_afo_reason "found by the probe but not here")
      endif()
    endif()
    if(NOT ${_afo_name}_FOUND)
      list(JOIN _afo_DEBIAN " " _afo_packages)
      set(_afo_text "${_afo_WHAT} skipped: ${_afo_name}: ${_afo_reason}; install the Debian packages ${_afo_packages} (scripts/deps.sh installs them)")
      if(NOT _afo_ok)
        string(APPEND _afo_text "; the probe's output: ${CMAKE_BINARY_DIR}/CMakeFiles/avgpool-probe-${_afo_name}.log")
      endif()
      if(AVGPOOL_REQUIRE_OPTIONAL_DEPS)
        message(FATAL_ERROR "${_afo_text}; AVGPOOL_REQUIRE_OPTIONAL_DEPS is ON")
      endif()
      message(STATUS "${_afo_text}")
    endif()
  endif()
endmacro()
