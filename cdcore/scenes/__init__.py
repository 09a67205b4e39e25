"""Named scenes (chains, hand, rigid pairs, deforming meshes, proximity) shared by the
bench and the app; descriptions are JSON files under ``assets/scenes``."""
from .scene import SCENE_DIR, Scene, SceneBody, list_scenes, load_scene, rigid_scene
from .runner import FrameResult, SceneRunner
from .spec import SceneError

__all__ = ["SCENE_DIR", "Scene", "SceneBody", "SceneError", "list_scenes", "load_scene", "rigid_scene", "FrameResult",
           "SceneRunner"]
