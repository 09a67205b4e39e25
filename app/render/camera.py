"""Camera moves of the 3-D view (VTK only, no Qt): frame bounds, measure how much of the
view points fill, and look across a separating axis."""
from __future__ import annotations

import numpy as np


def corners_of(bounds) -> np.ndarray:
    b = [float(x) for x in bounds]
    return np.array([[b[i], b[2 + j], b[4 + k]] for i in (0, 1) for j in (0, 1) for k in (0, 1)])


def view_extent(renderer, points) -> float:
    """Largest |x| or |y| of ``points`` in normalised view coordinates (1: the edge)."""
    out = 0.0
    for p in points:
        renderer.SetWorldPoint(float(p[0]), float(p[1]), float(p[2]), 1.0)
        renderer.WorldToView()
        x, y, _ = renderer.GetViewPoint()
        out = max(out, abs(x), abs(y))
    return out


def fit_bounds(renderer, bounds, fill: float = 0.9) -> None:
    """Frame ``bounds`` (6,) keeping the view direction: the projected box fills ``fill``
    of the view's tighter side (VTK's ResetCamera centres the bounds' sphere, loose for
    long, thin scenes such as the chains)."""
    b = [float(x) for x in bounds]
    renderer.ResetCamera(*b)
    cam = renderer.GetActiveCamera()
    corners = corners_of(b)
    for _ in range(3):  # dolly until the projected box fills ~fill of the view
        ext = view_extent(renderer, corners)
        if not np.isfinite(ext) or ext <= 0:
            break
        f = fill / ext
        if abs(f - 1.0) < 0.03:
            break
        cam.Dolly(min(max(f, 0.2), 5.0))
        renderer.ResetCameraClippingRange()
    renderer.ResetCameraClippingRange()


def look_across(renderer, axis, up_hint=(0.0, 0.0, 1.0)) -> None:
    """Turn the camera about its focal point so that ``axis`` lies in the image plane
    (horizontal): the viewer looks perpendicular to the separating axis and sees both
    projected intervals and the gap between them side by side (looking along the axis
    shrinks it to a dot). The view direction kept is the current one made perpendicular
    to the axis, so the scene turns as little as possible."""
    u = np.asarray(axis, dtype=np.float64)
    n = np.linalg.norm(u)
    if not np.isfinite(n) or n == 0:
        return
    u = u / n
    cam = renderer.GetActiveCamera()
    focal = np.array(cam.GetFocalPoint())
    pos = np.array(cam.GetPosition())
    dist = float(np.linalg.norm(pos - focal)) or 1.0
    d = (focal - pos) / dist  # current view direction
    d = d - (d @ u) * u       # made perpendicular to the axis
    if np.linalg.norm(d) < 1e-6:  # looking straight along the axis: pick any perpendicular
        for cand in (up_hint, (0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)):
            c = np.asarray(cand, dtype=np.float64)
            d = c - (c @ u) * u
            if np.linalg.norm(d) > 1e-6:
                break
    d /= np.linalg.norm(d)
    up = np.cross(u, d)  # perpendicular to both: the axis runs left-right on screen
    if up @ np.asarray(up_hint, dtype=np.float64) < 0:
        up = -up
    cam.SetPosition(*(focal - dist * d))
    cam.SetViewUp(*up)
    renderer.ResetCameraClippingRange()
