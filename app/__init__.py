"""The BVH visual debugger (PySide6 + pyvista): ``python -m app``."""
