# Install rules (AVGPOOL_INSTALL, on by default when avgpool is the top-level
# project): a relocatable package, usable from whatever prefix it is
# installed or unpacked to.
#   include/avgpool/avgpool.h, avgpool.hpp                     Development
#   <libdir>/libavgpool.so.X.Y (shared) or libavgpool.a        Runtime / Development
#   <libdir>/cmake/avgpool/avgpoolConfig*.cmake, avgpoolTargets*.cmake
#                                                              Development
#   <libdir>/pkgconfig/avgpool.pc                              Development
#   bin/avgpool (the CLI, with AVGPOOL_BUILD_CLI)              Runtime
# The components are what `cpack -G DEB` splits into the runtime and -dev
# packages (cmake/avgpool_cpack.cmake). Consumers: docs/install.md.
include(CMakePackageConfigHelpers)

set(AVGPOOL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/avgpool" CACHE STRING
  "Where avgpoolConfig.cmake is installed (relative to the prefix)")
mark_as_advanced(AVGPOOL_INSTALL_CMAKEDIR)

install(TARGETS avgpool EXPORT avgpoolTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/avgpool
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development)

# ---- CMake package: find_package(avgpool CONFIG) -> avgpool::avgpool ----------
install(EXPORT avgpoolTargets NAMESPACE avgpool:: DESTINATION ${AVGPOOL_INSTALL_CMAKEDIR}
  COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/avgpoolConfig.cmake.in
  ${PROJECT_BINARY_DIR}/avgpoolConfig.cmake
  INSTALL_DESTINATION ${AVGPOOL_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so a request for 0.1 accepts 0.1.z only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/avgpoolConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/avgpoolConfig.cmake ${PROJECT_BINARY_DIR}/avgpoolConfigVersion.cmake
  DESTINATION ${AVGPOOL_INSTALL_CMAKEDIR} COMPONENT Development)

# ---- pkg-config: avgpool.pc ------------------------------------------------------
# The prefix is found from the .pc file's own place (${pcfiledir}), so the
# installed tree can move. A static library lists what its final link needs
# in Libs.private (pkg-config --static).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(AVGPOOL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _avgpool_pc_up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" _avgpool_pc_up "${_avgpool_pc_up}")
  set(AVGPOOL_PC_PREFIX "\${pcfiledir}/${_avgpool_pc_up}")
endif()
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(AVGPOOL_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(AVGPOOL_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
set(AVGPOOL_PC_CFLAGS "")
set(AVGPOOL_PC_LIBS_PRIVATE "")
if(AVGPOOL_STATIC_BUILD)
  set(AVGPOOL_PC_CFLAGS " -DAVGPOOL_STATIC")
  set(_private "")
  if(AVGPOOL_WITH_CUDA)
    list(APPEND _private "-L${CUDAToolkit_LIBRARY_DIR}" -lcudart_static -ldl -lrt -lpthread)
  endif()
  if(AVGPOOL_WITH_OPENMP)
    foreach(_lib IN LISTS OpenMP_CXX_LIB_NAMES)
      list(APPEND _private "-l${_lib}")
    endforeach()
  endif()
  # The C++ runtime and libm: a C program links a static libavgpool too.
  foreach(_lib IN LISTS CMAKE_CXX_IMPLICIT_LINK_LIBRARIES)
    if(_lib MATCHES "^(stdc\\+\\+|c\\+\\+|c\\+\\+abi|m)$")
      list(APPEND _private "-l${_lib}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _private)
  list(JOIN _private " " AVGPOOL_PC_LIBS_PRIVATE)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/avgpool.pc.in ${PROJECT_BINARY_DIR}/avgpool.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/avgpool.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT Development)
