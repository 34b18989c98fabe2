#!/usr/bin/env bash
# install.sh: phobos as a user builds, installs and uses it, out of the tree.
#   tests/install.sh FAKE_LIBCUDA [WORKDIR]
# Configures a fresh build of this tree with the defaults a user gets (no
# werror, -O2) and a prefix under WORKDIR, `meson install`s it, finds the
# library through `pkg-config --cflags --libs phobos`, compiles a kernel's
# module with the installed phobosc, as files and as C (--emit=c; the cubin
# is a stand-in from a stand-in ptxas: CI has none, and the fake driver
# loads anything the runtime's ELF check passes), builds
# tests/install/user.c with the module's C against the prefix twice (-O2, and
# -O2 under ASan + UBSan) and runs both over the fake driver. Prints one
# line of TAP a step; exits 1 on the first failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fake=${1:?usage: tests/install.sh FAKE_LIBCUDA [WORKDIR]}
work=${2:-$(mktemp -d /tmp/phobos_install_XXXXXX)}
mkdir -p "$work"
fail() { echo "not ok - $1"; [ -n "${2:-}" ] && tail -20 "$2"; exit 1; }
pfx=$work/prefix
meson setup "$work/build" "$root" --prefix="$pfx" > "$work/setup.log" 2>&1 || fail "meson setup (user defaults)" "$work/setup.log"
ninja -C "$work/build" install > "$work/install.log" 2>&1 || fail "ninja install" "$work/install.log"
echo "ok - a user build (defaults: -O2, no werror) installs to $pfx"
pc=$(find "$pfx" -name phobos.pc | head -1)
[ -n "$pc" ] || fail "phobos.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs phobos) || fail "pkg-config --cflags --libs phobos"
echo "ok - pkg-config --cflags --libs phobos: $flags"
[ -x "$pfx/bin/phobosc" ] || fail "phobosc installed in $pfx/bin"
printf '@grid(cdiv(N, 256))\nkernel scale(X: tensor<f32>[N], Y: tensor<f32>[N], s: f32) {\n  let i = program_id(0) * 256\n  Y[i :+ 256] = X[i :+ 256] * s\n}\n' > "$work/scale.ph"
# a stand-in ptxas: a 64-byte CUDA ELF header, all the fake driver needs
cat > "$work/ptxas" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '\177ELF\002\001\001' > "$out"; head -c 11 /dev/zero >> "$out"; printf '\276\000\001' >> "$out"
head -c 31 /dev/zero >> "$out"; printf '\100' >> "$out"; head -c 11 /dev/zero >> "$out"
SH
chmod +x "$work/ptxas"
PHOBOS_PTXAS=$work/ptxas "$pfx/bin/phobosc" -o "$work/scale.cubin" "$work/scale.ph" > "$work/phobosc.log" 2>&1 ||
  fail "the installed phobosc writes the module" "$work/phobosc.log"
PHOBOS_PTXAS=$work/ptxas "$pfx/bin/phobosc" --emit=c -o "$work/scale_mod.c" "$work/scale.ph" > "$work/phobosc.log" 2>&1 ||
  fail "the installed phobosc writes the module as C (--emit=c)" "$work/phobosc.log"
"$pfx/bin/phobosc" --emit=header -o "$work/scale.h" "$work/scale.ph" > "$work/phobosc.log" 2>&1 ||
  fail "the installed phobosc writes the typed launchers (--emit=header)" "$work/phobosc.log"
echo "ok - the installed phobosc writes the module, the module as C, and its typed launchers"
libdir=$(pkg-config --variable=libdir phobos)
for mode in O2 san; do
  extra=()
  [ "$mode" = san ] && extra=(-fsanitize=address,undefined -fno-sanitize-recover=all)
  # shellcheck disable=SC2086
  cc -std=c17 -O2 -Wall -Wextra -Werror "${extra[@]}" -o "$work/user_$mode" -I"$work" "$root/tests/install/user.c" "$work/scale_mod.c" $flags \
    -Wl,-rpath,"$libdir" > "$work/cc_$mode.log" 2>&1 || fail "user.c built against the prefix (-O2 $mode)" "$work/cc_$mode.log"
  PHOBOS_LIBCUDA=$fake PHOBOS_CACHE_DIR=$work/cache ASAN_OPTIONS=detect_leaks=1 "$work/user_$mode" "$work/scale.cubin" > "$work/run_$mode.log" 2>&1 ||
    fail "user.c over the fake driver (-O2 $mode)" "$work/run_$mode.log"
  echo "ok - an out-of-tree C program (-O2${extra:+, ASan + UBSan}) loads and launches over the fake driver: $(grep -c '^ok' "$work/run_$mode.log") checks"
done
# the project snippets (examples/user_project): meson and CMake builds of a
# program that compiles its .ph into itself through the installed phobosc
export PATH=$pfx/bin:$PATH PHOBOS_PTXAS=$work/ptxas
meson setup "$work/up_meson" "$root/examples/user_project" > "$work/up_meson.log" 2>&1 &&
  ninja -C "$work/up_meson" >> "$work/up_meson.log" 2>&1 || fail "examples/user_project with meson" "$work/up_meson.log"
cmake -S "$root/examples/user_project" -B "$work/up_cmake" > "$work/up_cmake.log" 2>&1 &&
  cmake --build "$work/up_cmake" >> "$work/up_cmake.log" 2>&1 || fail "examples/user_project with CMake" "$work/up_cmake.log"
for b in up_meson up_cmake; do
  out=$(LD_LIBRARY_PATH=$libdir PHOBOS_LIBCUDA=$fake PHOBOS_CACHE_DIR=$work/cache "$work/$b/app" 1000 2>&1)
  [ "$out" = PHOBOS_OK ] || fail "examples/user_project's app ($b) over the fake driver: $out"
done
echo "ok - examples/user_project builds with meson and with CMake against the prefix, and its app launches"

