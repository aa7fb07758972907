#!/usr/bin/env bash
# stamp.sh -- prints a 16-hex stamp of what build.sh builds the harness from: the built
# kernels' sources (kernels/*.c, .cu, .cuh, .h), this folder's code and scripts, reference/ and
# verify/ (C sources and headers). A build-fwdv2/BUILT_FROM.txt with the same stamp means the
# harness there was built from exactly these inputs (build.sh takes ~9 min on 2 cores).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
cat kernels/*.c kernels/*.cu kernels/*.cuh kernels/*.h "$here"/*.cu "$here"/*.cuh "$here"/*.h "$here"/*.cc \
  "$here"/build.sh "$here"/device.sh "$here"/explore.sh "$here"/stamp.sh reference/*.c reference/*.h verify/*.c verify/*.h |
  sha256sum | cut -c1-16
