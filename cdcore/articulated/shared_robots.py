"""Where the real robot descriptions used by tests, benchmarks and demo scenes live.

They are not part of the project: ``CDCORE_ROBOTS_DIR`` names the directory that holds
``example-robot-data/`` and ``mjcf/`` (default: ``../shared/robots`` next to the repository
root). URDF robots: ``allegro``, ``panda``; MJCF: ``shadow`` (the Shadow hand scene)."""
from __future__ import annotations

import os
from dataclasses import dataclass

ENV_VAR = "CDCORE_ROBOTS_DIR"
_REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
_ROBOTS = {
    "allegro": ("example-robot-data/robots/allegro_hand_description/urdf/allegro_right_hand.urdf", None),
    "panda": ("example-robot-data/robots/panda_description/urdf/panda.urdf",
              "example-robot-data/robots/panda_description/srdf/panda.srdf"),
    "shadow": ("mjcf/shadow_hand/hand/reach.xml", None),
}
SHARED_ROBOTS = tuple(_ROBOTS)


@dataclass(frozen=True)
class SharedRobot:
    """``urdf`` is the robot's description file (an MJCF file when ``kind`` is "mjcf")."""
    name: str
    urdf: str
    package_dir: str
    srdf: str | None

    @property
    def kind(self) -> str:
        return "mjcf" if self.urdf.endswith(".xml") else "urdf"

    def load(self, **kw):
        """The robot: ``load_urdf(urdf, package_dir)`` or ``load_mjcf(file)`` (its floor
        plane left out silently), keyword arguments passed on."""
        if self.kind == "mjcf":
            import warnings

            from .mjcf import load_mjcf
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the scene's floor plane is not part of the robot
                return load_mjcf(self.urdf, **kw)
        from .urdf import load_urdf
        return load_urdf(self.urdf, self.package_dir, **kw)


def robots_dir() -> str:
    """The robots directory: ``$CDCORE_ROBOTS_DIR`` or ``<repo>/../shared/robots``."""
    return os.path.abspath(os.environ.get(ENV_VAR) or os.path.join(_REPO, "..", "shared", "robots"))


def shared_robot(name: str) -> SharedRobot:
    """Paths of a shared robot; ``FileNotFoundError`` (naming the variable to set) when absent."""
    if name not in _ROBOTS:
        raise ValueError(f"unknown shared robot {name!r}; known: {', '.join(_ROBOTS)}")
    d = robots_dir()
    urdf, srdf = _ROBOTS[name]
    path = os.path.join(d, urdf)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"robot {name!r} not found at {path}; set {ENV_VAR} to the directory "
                                f"holding example-robot-data/ and mjcf/")
    return SharedRobot(name, path, d, os.path.join(d, srdf) if srdf else None)


def available_robots() -> list:
    out = []
    for n in _ROBOTS:
        try:
            shared_robot(n)
            out.append(n)
        except FileNotFoundError:
            pass
    return out
