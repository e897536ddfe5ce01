# Sourced on the lent GPU machine (Ubuntu 24.04, no network): unpacks the Debian packages carried in
# .devdeps/ (made here by scripts/device/fetch-deps) into /tmp/devdeps and points CMake and
# pkg-config at them. Catch2 v3, Boost, libcurl and OpenSSL come from the machine itself.
set -u
DEVDEPS=/tmp/devdeps
# Unpacked once per machine: a second source (a script run while another build configures) must not
# rewrite the .pc files under a running pkg-config.
if [[ -d .devdeps && ! -f $DEVDEPS/.unpacked ]]; then
  mkdir -p $DEVDEPS
  for f in .devdeps/*.deb; do dpkg -x "$f" $DEVDEPS; done
  find $DEVDEPS -name '*.pc' -exec sed -i "s|^prefix=/usr|prefix=$DEVDEPS/usr|" {} +
  touch $DEVDEPS/.unpacked
fi
if [[ -d $DEVDEPS/usr ]]; then
  export PKG_CONFIG_PATH=$DEVDEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEVDEPS/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$DEVDEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CMAKE_PREFIX_PATH=$DEVDEPS/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
fi
export OUT=${OUT:-/tmp/kvgate-out}
mkdir -p "$OUT"
export KVGATE_BUILD_DIR=${KVGATE_BUILD_DIR:-build-gpu}
kvgate_device_build() {  # configure (once) and build with CUDA on
  [[ -f $KVGATE_BUILD_DIR/build.ninja ]] || cmake -S . -B "$KVGATE_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVGATE_CUDA=ON "$@"
  cmake --build "$KVGATE_BUILD_DIR" -j "$(nproc)"
}
