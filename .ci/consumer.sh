#!/usr/bin/env bash
# CI stage "consumer": avgpool used the ways docs/install.md says, by the
# programs docs/api.md shows (examples/example.c, examples/example.cpp; the
# stage first checks that the docs still show exactly those files).
#   1 install   a shared and a static CPU-only build, each installed into a
#               temporary prefix with `cmake --install`, then the prefix is
#               moved elsewhere (the package is relocatable)
#   2 package   examples/consumer with find_package(avgpool CONFIG REQUIRED)
#               against each moved prefix
#   3 pkgconfig cc and c++ with `pkg-config --cflags --libs avgpool` (static:
#               --static) against each moved prefix; the installed CLI runs;
#               `cpack -G DEB` of the shared build gives the runtime and -dev
#               packages
#   4 subproject examples/consumer with add_subdirectory of this source tree
#               (the parent sets nothing: a static library) and with
#               FetchContent of this repository (-DBUILD_SHARED_LIBS=ON); the
#               subproject builds no tests, benchmarks or CLI, and leaves the
#               parent's cache alone
# Each program must print the README's result (2.5 4.5 10.5 12.5). Build
# folders: build-consumer/. CI_JOBS sets the parallelism (2).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
avgpool_packages+=(pkg-config git)  # pkg-config: the .pc way; git: FetchContent of a local clone
[ -n "${AVGPOOL_SKIP_DEPS:-}" ] || avgpool_install_deps >/dev/null || echo "WARNING: could not install the dependencies"

root="$PWD/build-consumer"
rm -rf "$root" && mkdir -p "$root"
jobs="${CI_JOBS:-2}"
failed=0
fail() { echo "FAIL: $*"; failed=1; }
want="2.5 4.5 10.5 12.5"
# Runs a program; it must print $want first.
check_run() {  # check_run WHAT PROGRAM...
  local what="$1"; shift
  local out
  if out="$("$@" 2>&1)" && [ "$(head -1 <<<"$out")" = "$want" ]; then
    echo "  $what: ok ($(tail -1 <<<"$out"))"
  else
    fail "$what printed: $out"
  fi
}
quiet() {  # quiet LOG COMMAND...: runs it, shows the log's end on failure
  local log="$1"; shift
  "$@" >"$log" 2>&1 || { echo "  failed: $* (log $log)"; tail -30 "$log"; return 1; }
}

# ---- 0: the docs show the examples as they are ---------------------------------
for f in examples/example.c examples/example.cpp; do
  if awk -v f="$f" '$0 == "<!-- " f " -->" {on = 1; next}
                   on && /^```/ {if (body) exit; body = 1; next}
                   on && body {print}' docs/api.md | diff -q - "$f" >/dev/null; then
    echo "docs/api.md shows $f as it is: ok"
  else
    fail "docs/api.md does not show $f as it is (the block after <!-- $f -->)"
  fi
done

cpu=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DAVGPOOL_WITH_CUDA=OFF -DAVGPOOL_BUILD_TESTS=OFF
     -DAVGPOOL_BUILD_BENCH=OFF -DAVGPOOL_BUILD_EXAMPLES=OFF)
for kind in shared static; do
  echo "== $kind"
  shared=ON; [ "$kind" = static ] && shared=OFF
  # ---- 1: install, then move the prefix ----------------------------------------------
  if ! quiet "$root/lib-$kind.log" cmake -S . -B "$root/lib-$kind" "${cpu[@]}" -DBUILD_SHARED_LIBS=$shared ||
     ! quiet "$root/lib-$kind-build.log" cmake --build "$root/lib-$kind" --parallel "$jobs" ||
     ! quiet "$root/lib-$kind-install.log" cmake --install "$root/lib-$kind" --prefix "$root/installed-$kind"; then
    fail "$kind: build and install"
    continue
  fi
  if [ "$kind" = shared ]; then  # the Debian packages of the same build
    if quiet "$root/cpack.log" bash -c "cd '$root/lib-shared' && cpack -G DEB"; then
      for deb in "$root"/lib-shared/*.deb; do
        echo "  $(basename "$deb"): $(dpkg-deb -f "$deb" Depends | cut -c1-90)"
      done
      dpkg-deb -c "$root"/lib-shared/libavgpool0.1_*.deb | grep -q "usr/lib/libavgpool.so.0.1.0" ||
        fail "cpack: the runtime package has no libavgpool.so.0.1.0"
      dpkg-deb -f "$root"/lib-shared/libavgpool-dev_*.deb Depends | grep -q "libavgpool0.1 (= " ||
        fail "cpack: the -dev package does not depend on the runtime package"
    else
      fail "cpack -G DEB"
    fi
  fi
  mv "$root/installed-$kind" "$root/moved-$kind"
  prefix="$root/moved-$kind"
  echo "  installed and moved: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
  if [ "$kind" = shared ]; then
    [ -f "$prefix/lib/libavgpool.so.0.1" ] || [ -L "$prefix/lib/libavgpool.so.0.1" ] || fail "shared: no libavgpool.so.0.1"
  else
    [ -f "$prefix/lib/libavgpool.a" ] || fail "static: no libavgpool.a"
  fi
  # ---- 2: find_package ------------------------------------------------------------------
  if quiet "$root/package-$kind.log" cmake -S examples/consumer -B "$root/package-$kind" -G Ninja \
       -DAVGPOOL_CONSUME=package -DCMAKE_PREFIX_PATH="$prefix" &&
     quiet "$root/package-$kind-build.log" cmake --build "$root/package-$kind"; then
    grep -h "avgpool 0" "$root/package-$kind.log" | sed 's/^-- /  /'
    check_run "find_package, C ($kind)" "$root/package-$kind/consumer_c"
    check_run "find_package, C++ ($kind)" "$root/package-$kind/consumer_cpp"
  else
    fail "find_package ($kind): configure or build failed"
  fi
  # ---- 3: pkg-config --------------------------------------------------------------------
  pc=(pkg-config); [ "$kind" = static ] && pc+=(--static)
  flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" "${pc[@]}" --cflags --libs avgpool)" ||
    fail "pkg-config ($kind) does not find avgpool"
  echo "  ${pc[*]} --cflags --libs avgpool: $flags"
  # shellcheck disable=SC2086 # the flags are words
  if quiet "$root/pc-$kind-c.log" cc -std=c11 -o "$root/pc-$kind-c" examples/example.c $flags &&
     quiet "$root/pc-$kind-cpp.log" c++ -o "$root/pc-$kind-cpp" examples/example.cpp $flags; then
    check_run "pkg-config, C ($kind)" env LD_LIBRARY_PATH="$prefix/lib" "$root/pc-$kind-c"
    check_run "pkg-config, C++ ($kind)" env LD_LIBRARY_PATH="$prefix/lib" "$root/pc-$kind-cpp"
  else
    fail "pkg-config ($kind): compile or link failed"
  fi
  if out="$("$prefix/bin/avgpool" run --backend cpu --shape 1,2,64,64 --kernel 3 2>&1)"; then
    echo "  installed CLI runs: $(tail -1 <<<"$out" | cut -c1-120)"
  else
    fail "the installed CLI ($kind) does not run: $out"
  fi
done

# ---- 4: this source tree as a subproject -----------------------------------------------
echo "== subproject"
sub_check() {  # sub_check NAME BUILD_DIR LIBRARY_GLOB [parent-untouched]
  local name="$1" dir="$2" lib="$3" cache="$2/CMakeCache.txt"
  check_run "$name, C" "$dir/consumer_c"
  check_run "$name, C++" "$dir/consumer_cpp"
  compgen -G "$dir/$lib" >/dev/null || fail "$name: no $lib"
  for t in tests cli bench examples; do
    [ -e "$dir/avgpool/$t" ] || [ -e "$dir/_deps/avgpool-build/$t" ] && fail "$name: the subproject built $t/"
  done
  grep -q "^AVGPOOL_BUILD_TESTS:BOOL=OFF$" "$cache" || fail "$name: AVGPOOL_BUILD_TESTS is not off"
  if [ "${4:-}" = parent-untouched ]; then
    # The parent set neither: the subproject must not have either.
    grep -q "^BUILD_SHARED_LIBS:" "$cache" && fail "$name: the subproject set BUILD_SHARED_LIBS"
    grep -q "^CMAKE_BUILD_TYPE:STRING=$" "$cache" || fail "$name: the subproject set CMAKE_BUILD_TYPE"
  fi
  echo "  $name: no tests, benchmarks, CLI or examples built; the parent's settings kept"
}
if quiet "$root/subdir.log" cmake -S examples/consumer -B "$root/subdir" -G Ninja \
     -DAVGPOOL_CONSUME=subdirectory -DAVGPOOL_SOURCE_DIR="$PWD" -DAVGPOOL_WITH_CUDA=OFF &&
   quiet "$root/subdir-build.log" cmake --build "$root/subdir" --parallel "$jobs"; then
  sub_check "add_subdirectory (static)" "$root/subdir" "avgpool/libavgpool.a" parent-untouched
else
  fail "add_subdirectory: configure or build failed"
fi
if quiet "$root/fetch.log" cmake -S examples/consumer -B "$root/fetch" -G Ninja -DAVGPOOL_CONSUME=fetchcontent \
     -DAVGPOOL_GIT_REPOSITORY="$PWD" -DAVGPOOL_GIT_TAG="$(git rev-parse HEAD)" -DBUILD_SHARED_LIBS=ON \
     -DAVGPOOL_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Release &&
   quiet "$root/fetch-build.log" cmake --build "$root/fetch" --parallel "$jobs"; then
  sub_check "FetchContent (shared)" "$root/fetch" "_deps/avgpool-build/libavgpool.so*"
else
  fail "FetchContent: configure or build failed"
fi

if [ $failed -ne 0 ]; then
  echo "consumer check FAILED (logs in build-consumer/)"
  exit 1
fi
echo "consumer check passed"
