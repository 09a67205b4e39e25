"""``python -m app.startup_bench``: how long the debugger takes to show its window and its first frame.

Each launch is a fresh ``python -m app --scene S --frames 1 --quit --report-startup``
process; the times run from just before the process is spawned to

- the first window: the main window mapped and painted, every dock, menu and toolbar drawn
  and the 3-D view's frame on screen, usable (the app prints ``window-shown <unix time>`` at
  the end of its first paint that settled: ``MainWindow.first_painted``); with an empty
  numba cache it is the first-start window that counts the kernels being compiled;
- the first frame: the window has drawn the scene (``first-window <unix time>``).

Launches get a private settings directory; the numba cache is

- cold: a private, empty one (``NUMBA_CACHE_DIR``): every kernel the scene needs compiles
  at start (the project's cache is not touched);
- after set-up: the project's own, as ``python -m cdcore.warmup`` (what ``.ci/setup.sh``
  runs) leaves it: the warmup runs first (quick when it is already done; its time is
  printed), then the first launch. The set-up also writes Python's bytecode cache of
  ``app`` and ``cdcore`` (``compileall``), as installing a package does: an editable install
  run with ``PYTHONDONTWRITEBYTECODE=1`` (this machine's sessions) has none and compiled the
  ~120 project modules a start imports from source at every start (~0.5 s);
- warm: the launches after that (median).

It also times ``import cdcore`` in a fresh interpreter. Needs a display (run it under
``xvfb-run -a -s '-screen 0 1600x1000x24'`` on a machine without one).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env(cache_dir: str | None, config_dir: str) -> dict:
    env = dict(os.environ, XDG_CONFIG_HOME=config_dir)
    env.pop("NUMBA_CACHE_DIR", None)
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = cache_dir
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def launch_phases(env: dict, scene: str, size: str, timeout: float) -> dict:
    """Seconds from spawning the app to each line it prints with ``--report-startup``:
    ``started``, ``phase NAME`` lines (``engine-loaded``, ``view-imported``, ``qt-started``,
    ``modules-imported``, ``window-built``, ``scene-built``), ``window-shown`` and
    ``first-window`` (its first drawn frame)."""
    cmd = [sys.executable, "-m", "app", "--scene", scene, "--frames", "1", "--quit", "--report-startup",
           "--size", size]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout, check=False)
    got = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        try:
            if parts[0] in ("started", "first-window", "window-shown") and len(parts) >= 2:
                got.setdefault(parts[0], float(parts[1]) - t0)  # the first window: the first-start one
            elif parts[0] == "phase" and len(parts) >= 3:
                got.setdefault(parts[1], float(parts[2]) - t0)
        except (IndexError, ValueError):
            continue
    if "first-window" not in got:
        raise RuntimeError(f"the app did not report its first window (exit {r.returncode}):\n{r.stderr[-2000:]}")
    return got


def launch(env: dict, scene: str, size: str, timeout: float) -> tuple[float, float]:
    """Seconds from spawning the app to (its window on screen, its first drawn frame)."""
    got = launch_phases(env, scene, size, timeout)
    return got.get("window-shown", got["first-window"]), got["first-window"]




def import_time(env: dict) -> float:
    code = "import time; t = time.perf_counter(); import cdcore; print(time.perf_counter() - t)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                       check=True)
    return float(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.startup_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--scene", default="chains-6to1")
    p.add_argument("--size", default="1600x1000", help="window size WxH")
    p.add_argument("--runs", type=int, default=3, help="warm launches (median)")
    p.add_argument("--skip-cold", action="store_true", help="skip the empty-cache launch (it compiles everything)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds allowed per launch")
    args = p.parse_args(argv)
    if args.runs < 1:
        print("error: --runs must be positive", file=sys.stderr)
        return 2
    from app.__main__ import HEADLESS_HINT, has_display
    if not has_display():
        print(HEADLESS_HINT.replace("python -m app --scene chains-6to1 --frames 300 --record out.csv "
                                    "--screenshot out.png --quit", "python -m app.startup_bench"), file=sys.stderr)
        return 1
    print(f"start of {args.scene} at {args.size}, python {sys.version.split()[0]}: seconds from spawn to the first "
          "window (main window mapped and painted) / the first frame (the scene drawn)")
    try:
        with tempfile.TemporaryDirectory(prefix="bvh-startup-") as tmp:
            config = os.path.join(tmp, "config")
            if not args.skip_cold:
                shown, cold = launch(_env(os.path.join(tmp, "cold-cache"), config), args.scene, args.size,
                                     args.timeout)
                print(f"  cold, empty numba cache        {cold:7.2f} s   (window on screen after {shown:.2f} s, "
                      "compiling with progress)", flush=True)
            env = _env(None, config)  # the project's cache, as the set-up leaves it
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "cdcore.warmup"], env=env, cwd=ROOT, check=True,
                           capture_output=True, timeout=args.timeout * 4)
            subprocess.run([sys.executable, "-m", "compileall", "-q", "app", "cdcore"], env=env, cwd=ROOT,
                           check=True, capture_output=True, timeout=args.timeout)
            setup = time.perf_counter() - t0
            shown, after = launch(env, args.scene, args.size, args.timeout)
            print(f"  after set-up (warmup {setup:5.1f} s)   first window {shown:6.2f} s   first frame {after:6.2f} s",
                  flush=True)
            runs = [launch_phases(env, args.scene, args.size, args.timeout) for _ in range(args.runs)]
            windows = [r.get("window-shown", r["first-window"]) for r in runs]
            frames = [r["first-window"] for r in runs]
            print(f"  warm, median of {args.runs:<3d}            first window {statistics.median(windows):6.2f} s   "
                  f"({' '.join(f'{x:.2f}' for x in windows)})", flush=True)
            print(f"  warm, median of {args.runs:<3d}            first frame  {statistics.median(frames):6.2f} s   "
                  f"({' '.join(f'{x:.2f}' for x in frames)})", flush=True)
            names = sorted({k for r in runs for k in r}, key=lambda k: statistics.median(
                r[k] for r in runs if k in r))
            print("  warm, when each phase ended (median s from spawn): "
                  + "  ".join(f"{k} {statistics.median(r[k] for r in runs if k in r):.2f}" for k in names),
                  flush=True)
            imports = [import_time(env) for _ in range(max(args.runs, 5))]
            print(f"import cdcore, median of {len(imports)}        {statistics.median(imports):7.3f} s")
    except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
