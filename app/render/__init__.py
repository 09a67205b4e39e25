"""pyvista layers of the 3D view (no Qt): hierarchies, body meshes, overlays, palettes.

Every layer takes a pyvista ``Plotter``-like object (``add_mesh`` / ``remove_actor`` /
``render``: a ``pyvista.Plotter`` or a pyvistaqt ``QtInteractor``), updates its
PolyData in place and never renders: render once per frame after updating all layers.
Actor names must be unique per plotter (pyvista replaces an actor of the same name).

Software GL (llvmpipe under Xvfb): the numpy side of a frame is 1-2 ms; the render is
what costs. pyvista's theme defaults to 8x MSAA, which alone costs ~50-100 ms per frame
in llvmpipe: create the view with ``pyvista.global_theme.multi_samples = 1`` (or
``QtInteractor(multi_samples=1)``) and no anti-aliasing. llvmpipe's cost then grows with
the number of line segments (12 per box, 72 per sphere) and with filled pixels.
"""
from .colors import BODY_COLORS, HEAT_CMAP, PAIR_COLORS, STATE_COLORS, body_color, heat_colors
from .hierarchy import HierarchyLayer, NodeHighlight, kdop_polytope_edges
from .meshes import BodyMeshLayer
from .overlay import AxisOverlay, ContactOverlay, Legend, pair_midpoints

__all__ = ["AxisOverlay", "BODY_COLORS", "BodyMeshLayer", "ContactOverlay", "HEAT_CMAP", "HierarchyLayer", "Legend",
           "NodeHighlight", "PAIR_COLORS", "STATE_COLORS", "body_color", "heat_colors", "kdop_polytope_edges",
           "pair_midpoints"]
