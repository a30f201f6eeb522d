# Records every find_package call of a configure, including those made inside
# other packages' CMake configs and in avgpool_find_optional's probes, one
# line each: "<package><TAB><calling file>", appended to the file named by
# the environment variable AVGPOOL_FIND_PACKAGE_LOG. Used by .ci/check_deps:
#   AVGPOOL_FIND_PACKAGE_LOG=log cmake ... \
#     -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=$PWD/cmake/record_find_package.cmake
# It only records: the search itself is CMake's usual one.
function(avgpool_record_find_package method name)
  if(DEFINED ENV{AVGPOOL_FIND_PACKAGE_LOG})
    file(APPEND "$ENV{AVGPOOL_FIND_PACKAGE_LOG}" "${name}\t${CMAKE_CURRENT_LIST_FILE}\n")
  endif()
endfunction()
cmake_language(SET_DEPENDENCY_PROVIDER avgpool_record_find_package SUPPORTED_METHODS FIND_PACKAGE)
