# Debian packages from an install tree: `cpack -G DEB` in the build folder
# gives
#   libavgpoolX.Y     the Runtime component: the shared library, the CLI
#   libavgpool-dev    the Development component: headers, libavgpool.so (or
#                     the static libavgpool.a), the CMake package, avgpool.pc;
#                     it depends on the runtime package of the same version
# installed under /usr (docs/install.md, Debian packages).
set(CPACK_PACKAGE_NAME avgpool)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "avgpool maintainers <avgpool@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Runtime Development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(_avgpool_runtime_package "libavgpool${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${_avgpool_runtime_package})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libavgpool-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
# The runtime package's dependencies (libc, libstdc++, libgomp) from the
# binaries themselves, where dpkg-shlibdeps (Debian's dpkg-dev) is there.
find_program(AVGPOOL_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(AVGPOOL_DPKG_SHLIBDEPS)
if(AVGPOOL_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)
cpack_add_component(Runtime DISPLAY_NAME "avgpool runtime")
cpack_add_component(Development DISPLAY_NAME "avgpool development files" DEPENDS Runtime)
