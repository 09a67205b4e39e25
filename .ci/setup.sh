#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine (Python 3.11, root, no display):
# system packages Qt's xcb plugin and Xvfb need, then a project venv in .venv.
# Sourced by .ci/launch and .ci/test; re-running does nothing when all is in place.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

# libqxcb.so's own dependencies (ldd shows libxcb-icccm4/keysyms1 missing on a new machine),
# Xvfb + xauth for xvfb-run, and Mesa for VTK's software GL.
APT_PKGS="xvfb xauth libxcb-icccm4 libxcb-keysyms1 libxcb-xinerama0 libxcb-cursor0 libxcb-image0
libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libgl1 libegl1
libgl1-mesa-dri libglx-mesa0 libxrender1 libfontconfig1 libdbus-1-3"

missing=""
if command -v dpkg-query >/dev/null 2>&1; then
  for p in $APT_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
  done
fi
if [ -n "$missing" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "[setup] installing system packages:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "[setup] warning: missing system packages (install them as root):$missing" >&2
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV"
  "$PY" -m venv "$VENV"
fi
# Reinstall only when pyproject.toml changed since the last successful install.
STAMP="$VENV/.installed-$(sha1sum "$ROOT/pyproject.toml" | cut -c1-12)"
if [ ! -f "$STAMP" ]; then
  echo "[setup] installing the project and its dependencies into .venv"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e "$ROOT[test,bench,mjcf,dask]"
  rm -f "$VENV"/.installed-*
  touch "$STAMP"
fi

# Precompile every numba kernel into the on-disk cache (cdcore/**/__pycache__), so the first
# window and the first query of a fresh process load machine code instead of compiling it.
# Re-run only when cdcore's sources changed since the last successful warm-up.
WARM="$VENV/.warm-$(cat $(find "$ROOT/cdcore" -name '*.py' | sort) | sha1sum | cut -c1-12)"
if [ ! -f "$WARM" ]; then
  echo "[setup] compiling the engine's kernels into numba's cache (once; a few minutes on 2 cores)"
  # numba keys a cached kernel on its own module's source only: after any change, drop every
  # cached kernel so none keeps an inlined copy of an old callee from another module
  find "$ROOT/cdcore" -name '*.nbi' -delete -o -name '*.nbc' -delete
  (cd "$ROOT" && "$VENV/bin/python" -m cdcore.warmup) | tail -n 2  # its time and its signature report
  rm -f "$VENV"/.warm-*
  touch "$WARM"
fi

# Python's bytecode cache for the project's own modules (an install writes it; an environment
# with PYTHONDONTWRITEBYTECODE set never would, and every start then compiles ~120 modules
# from source, ~0.5 s of the app's warm start). compileall skips what is up to date.
"$VENV/bin/python" -m compileall -q "$ROOT/app" "$ROOT/cdcore" >/dev/null || true
