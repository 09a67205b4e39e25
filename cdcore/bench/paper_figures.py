"""The published figures the ``tables`` subcommand prints beside its own, as data.

* Schmidl, Walker & Lin, "CAB: Fast Update of OBB Trees for Collision Detection between
  Articulated Bodies", JGT 2004 (``/work/shared/papers/cab-obb-update-articulated.txt``),
  Tables 1-5. Cumulative over the frames, times in seconds, rounded to two decimals (they
  do not always add up). Tables 1-4: 10000 frames on a Pentium 4 1.8 GHz (Windows 2000);
  Table 5: 4000 frames on an 866 MHz Pentium 3 laptop. Exact queries: SWIFT++ with DEEP.
* van den Bergen, "Efficient Collision Detection of Complex Deformable Models using AABB
  Trees", JGT 1997/98 (``/work/shared/papers/aabb-trees-deformable.txt``), Tables 1-3:
  100K random placements (about 60% colliding) on a Sun UltraSPARC-I 167 MHz (gcc -O2);
  RAPID for the OBB tree, a modified RAPID for the AABB tree. ``N_b``/``N_p`` counts,
  ``C_b``/``C_p`` microseconds per test, ``T_b``/``T_p``/``T_total`` seconds.

Keys of the CAB rows are the ``tables`` row keys (``brute`` and the update methods of
``cdcore.articulated.UPDATE_METHODS``); the van den Bergen models are mapped to the rigid
scenes by ``VDB_SCENE_MODEL``.
"""
from __future__ import annotations

# ---- CAB (Schmidl, Walker & Lin 2004) ---------------------------------------------------
CAB_COLUMNS = ("n_coll", "n_false", "t_query", "t_upd", "t_test", "t_total")

_P4 = "Pentium 4 1.8 GHz, Windows 2000 (2004)"
_P3 = "Pentium 3 866 MHz laptop, Windows XP (2004)"


def _rows(*rows):
    keys = ("brute", "aabb_plus", "aabb_star", "obb", "cab")
    return {k: dict(zip(CAB_COLUMNS, r)) for k, r in zip(keys, rows)}


#: scene name -> the CAB table it reproduces. Quoted as printed; note Table 1's AABB* row,
#: whose t[total] 15.94 is not the sum of its parts (1.99 + 8.08 + 5.42 = 15.49: probably
#: transposed digits in the paper).
CAB_TABLES = {
    "chains-3to1": {
        "table": "CAB Table 1", "caption": "16 convex links, ratio 3:1", "frames": 10000, "hardware": _P4,
        "rows": _rows((1200000, 1199786, 19.34, 0.0, 0.0, 19.34),
                      (71534, 71320, 1.86, 135.86, 4.94, 142.67),
                      (84148, 83934, 1.99, 8.08, 5.42, 15.94),
                      (5740, 5526, 0.16, 14.63, 1.75, 16.54),
                      (5740, 5526, 0.16, 6.34, 2.06, 8.56)),
    },
    "chains-6to1": {
        "table": "CAB Table 2", "caption": "16 convex links, ratio 6:1", "frames": 10000, "hardware": _P4,
        "rows": _rows((1200000, 1199646, 20.52, 0.0, 0.0, 20.52),
                      (130112, 129758, 2.97, 136.34, 7.04, 146.34),
                      (149466, 149112, 3.44, 8.04, 7.45, 18.94),
                      (7194, 6840, 0.21, 14.62, 1.60, 16.43),
                      (7194, 6840, 0.21, 6.33, 2.26, 8.80)),
    },
    "chains-dented": {
        "table": "CAB Table 3", "caption": "16 non-convex links, ratio 6:1", "frames": 10000, "hardware": _P4,
        "rows": _rows((1200000, 1199927, 22.24, 0.0, 0.0, 22.24),
                      (130112, 130039, 3.71, 135.79, 7.13, 146.63),
                      (148784, 148711, 3.97, 8.06, 7.46, 19.50),
                      (3405, 3332, 0.34, 14.70, 0.85, 15.88),
                      (3405, 3332, 0.34, 6.36, 1.38, 8.08)),
    },
    "chains-braided": {
        "table": "CAB Table 4", "caption": "16 convex links, \"braided\", ratio 6:1", "frames": 10000,
        "hardware": _P4,
        "rows": _rows((1200000, 1190472, 21.37, 0.0, 0.0, 21.37),
                      (65936, 56408, 3.88, 136.34, 4.67, 144.89),
                      (93502, 83974, 4.55, 8.11, 5.64, 18.29),
                      (24731, 15203, 2.83, 14.90, 3.01, 20.74),
                      (24731, 15203, 2.80, 6.35, 4.01, 13.17)),
    },
    "hand-ball": {
        "table": "CAB Table 5", "caption": "an articulated hand interacting with a ball", "frames": 4000,
        "hardware": _P3,
        "rows": _rows((288072, 287308, 16.08, 0.0, 0.0, 16.08),
                      (25893, 25129, 7.92, 68.42, 1.00, 77.35),
                      (27337, 26573, 8.79, 4.48, 0.88, 14.16),
                      (11031, 10267, 5.62, 6.65, 0.52, 12.79),
                      (11031, 10267, 5.65, 3.01, 0.56, 9.22)),
    },
}

#: CAB section 4: "The total time spent for CAB hierarchy update, testing, and exact
#: collision queries in our examples ranges from approximately 0.9 to 1.3 milliseconds per
#: frame" (3-4% of a 1/30 s frame).
CAB_PER_FRAME_MS = (0.9, 1.3)

# ---- van den Bergen (1998) ---------------------------------------------------------------
VDB_COLUMNS = ("N_b", "C_b", "T_b", "N_p", "C_p", "T_p", "T_total")
VDB_PLACEMENTS = 100_000
VDB_HARDWARE = "Sun UltraSPARC-I 167 MHz, gcc -O2 (1998)"
VDB_HIT_RATE = 0.60  # "approximately 60%" colliding placements, all models

#: rigid scene -> van den Bergen model
VDB_SCENE_MODEL = {"rigid-torus": "Torus", "rigid-slender": "X-wing", "rigid-teapot-like": "Teapot"}
#: triangle counts of the paper's models
VDB_MODEL_TRIANGLES = {"Torus": 5000, "X-wing": 6084, "Teapot": 3752}


def _vdb(*rows):
    models = ("Torus", "X-wing", "Teapot")
    return {m: dict(zip(VDB_COLUMNS, r)) for m, r in zip(models, rows)}


#: Table 1: both trees with the SAT (15 axes); Table 2: with the SAT lite (6 face axes).
#: test -> tree ("obb"/"aabb") -> model -> columns
VDB_TABLES = {
    "sat15": {
        "table": "vdB Table 1 (SAT)",
        "obb": _vdb((10178961, 4.9, 49.7, 197314, 15, 2.9, 52.6),
                    (48890612, 4.6, 223.8, 975217, 10, 10.2, 234.0),
                    (12025710, 4.8, 57.6, 186329, 14, 2.7, 60.3)),
        "aabb": _vdb((32913297, 3.7, 122.3, 3996806, 7.2, 28.7, 151.0),
                     (92376250, 3.1, 288.8, 8601433, 7.1, 61.3, 350.1),
                     (25810569, 3.3, 84.8, 1874830, 7.4, 13.9, 98.7)),
    },
    "sat6": {
        "table": "vdB Table 2 (SAT lite)",
        "obb": _vdb((13116295, 3.7, 47.9, 371345, 12, 4.4, 52.3),
                    (65041340, 3.4, 221.4, 2451543, 9.3, 22.9, 244.3),
                    (14404588, 3.5, 50.8, 279987, 13, 3.5, 54.3)),
        "aabb": _vdb((40238149, 2.4, 96.1, 5222836, 7.4, 38.4, 134.5),
                     (121462120, 1.9, 236.7, 13066095, 7.0, 91.3, 328.0),
                     (30127623, 2.1, 62.5, 2214671, 7.0, 15.6, 78.1)),
    },
}

#: Table 3: operation -> model -> seconds
VDB_TABLE3 = {
    "build_obb": {"Torus": 0.35, "X-wing": 0.46, "Teapot": 0.27},
    "build_aabb": {"Torus": 0.11, "X-wing": 0.18, "Teapot": 0.08},
    "refit_aabb": {"Torus": 15e-3, "X-wing": 18e-3, "Teapot": 11e-3},
    "test_obb": {"Torus": 0.5e-3, "X-wing": 2.3e-3, "Teapot": 0.6e-3},
    "test_aabb": {"Torus": 1.3e-3, "X-wing": 3.3e-3, "Teapot": 0.8e-3},
}
VDB_TABLE3_LABELS = {
    "build_obb": "Build an OBB tree", "build_aabb": "Build an AABB tree", "refit_aabb": "Refit an AABB tree",
    "test_obb": "Test a pair of OBB trees", "test_aabb": "Test a pair of AABB trees",
}

#: section 4: "for models composed of over 6000 triangles, refitting an AABB tree is about
#: ten times as fast as rebuilding it"; section 5: refit 2.9 us per triangle (> 1000 tris).
VDB_REFIT_SPEEDUP = 10.0
VDB_REFIT_THRESHOLD_TRIS = 6000
VDB_REFIT_US_PER_TRIANGLE = 2.9
#: section 5: SAT lite gives "a performance increase of about 15% on average for the AABB
#: tree, whereas the change in performance for the OBB tree is only marginal".
VDB_SAT_LITE_AABB_GAIN = 0.15

__all__ = ["CAB_COLUMNS", "CAB_TABLES", "CAB_PER_FRAME_MS", "VDB_COLUMNS", "VDB_PLACEMENTS", "VDB_HARDWARE",
           "VDB_HIT_RATE", "VDB_SCENE_MODEL", "VDB_MODEL_TRIANGLES", "VDB_TABLES", "VDB_TABLE3",
           "VDB_TABLE3_LABELS", "VDB_REFIT_SPEEDUP", "VDB_REFIT_THRESHOLD_TRIS", "VDB_REFIT_US_PER_TRIANGLE",
           "VDB_SAT_LITE_AABB_GAIN"]
