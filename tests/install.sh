#!/usr/bin/env bash
# install.sh: phobos as a user builds, installs and uses it, out of the tree.
#   tests/install.sh FAKE_LIBCUDA [WORKDIR]
# Configures a fresh build of this tree with the defaults a user gets (no
# werror, -O2) and a prefix under WORKDIR, `meson install`s it, finds the
# library through `pkg-config --cflags --libs phobos`, compiles a kernel's
# manifest with the installed phobosc (the cubin is a stand-in: CI has no
# ptxas, and the fake driver loads anything the runtime's ELF check
# passes), builds tests/install/user.c against the prefix twice (-O2, and
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
"$pfx/bin/phobosc" --emit=manifest -o "$work/scale.yaml" "$work/scale.ph" || fail "the installed phobosc writes a manifest"
printf '\177ELF\002\001\001' > "$work/scale.cubin"
head -c 57 /dev/zero >> "$work/scale.cubin"
printf '\276' | dd of="$work/scale.cubin" bs=1 seek=18 conv=notrunc status=none # EM_CUDA (190)
printf '\001' | dd of="$work/scale.cubin" bs=1 seek=20 conv=notrunc status=none
printf '\100' | dd of="$work/scale.cubin" bs=1 seek=52 conv=notrunc status=none
echo "ok - the installed phobosc writes the module's manifest"
libdir=$(pkg-config --variable=libdir phobos)
for mode in O2 san; do
  extra=()
  [ "$mode" = san ] && extra=(-fsanitize=address,undefined -fno-sanitize-recover=all)
  # shellcheck disable=SC2086
  cc -std=c17 -O2 -Wall -Wextra -Werror "${extra[@]}" -o "$work/user_$mode" "$root/tests/install/user.c" $flags \
    -Wl,-rpath,"$libdir" > "$work/cc_$mode.log" 2>&1 || fail "user.c built against the prefix (-O2 $mode)" "$work/cc_$mode.log"
  PHOBOS_LIBCUDA=$fake PHOBOS_CACHE_DIR=$work/cache ASAN_OPTIONS=detect_leaks=1 "$work/user_$mode" "$work/scale.cubin" > "$work/run_$mode.log" 2>&1 ||
    fail "user.c over the fake driver (-O2 $mode)" "$work/run_$mode.log"
  echo "ok - an out-of-tree C program (-O2${extra:+, ASan + UBSan}) loads and launches over the fake driver: $(grep -c '^ok' "$work/run_$mode.log") checks"
done
