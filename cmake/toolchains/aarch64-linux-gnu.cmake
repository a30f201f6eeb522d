# Cross-compiling for 64-bit Arm Linux with Debian's cross toolchain
# (g++-aarch64-linux-gnu; OpenMP is its libgomp). Tests run under qemu-user
# (Debian's qemu-user), which CTest puts in front of every test program:
#   cmake -S . -B build-aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#   ctest --test-dir build-aarch64 -L cpu
# .ci/aarch64.sh does this (CI's aarch64 stage).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(_triple aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${_triple}-gcc)
set(CMAKE_CXX_COMPILER ${_triple}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${_triple})
# Programs are the build machine's; libraries the target's. The header-only
# packages (Eigen, doctest) are architecture-independent: their CMake
# packages and headers are found where Debian installs them.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
find_program(AVGPOOL_QEMU_AARCH64 qemu-aarch64)
if(AVGPOOL_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${AVGPOOL_QEMU_AARCH64} -L /usr/${_triple})
endif()
