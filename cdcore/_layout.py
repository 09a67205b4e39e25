"""Flat node layout shared by every kernel.

A hierarchy is two arrays indexed by node id (children always after their parent,
so a refit is one reverse loop -- van den Bergen 1998, section 4):

``nodes_i`` : (n, 4) int32
    LEFT, RIGHT child ids (-1 for none: a leaf), START, COUNT: the node's primitives are
    ``prim_order[START:START+COUNT]``.
``nodes_f`` : (n, 20) float64
    One row per node, every bounding volume of the node side by side:
    box centre (3), box half-extents (3), box axes (9, row-major 3x3 matrix whose *columns* are
    the box axes, sorted by decreasing extent for oriented boxes), sphere centre (3), sphere
    radius (1), SIZE (1): the volume used to choose which node to descend (section 3).

AABB trees keep compact rows inside their pack (``AABB_FCOLS`` columns: box centre, half-extents,
SIZE; 56 bytes instead of 160), since their axes are the identity and they have no sphere: a
refit then writes whole rows and streams memory (issue 15: 160-byte rows cost 3-5x).
``BVH.nodes_f`` still shows the full ``N_FCOLS`` rows. SIZE is the last column of both row
layouts, so a kernel reads it as ``nf[node, nf.shape[1] - 1]`` whatever the layout.
"""

# nodes_i columns
LEFT = 0
RIGHT = 1
START = 2
COUNT = 3
N_ICOLS = 4

# nodes_f columns
C0 = 0  # box centre x, y, z at 0..2
E0 = 3  # box half-extents at 3..5
R0 = 6  # box axes: R[r][c] at R0 + 3*r + c
S0 = 15  # sphere centre at 15..17
SR = 18  # sphere radius
SIZE = 19
N_FCOLS = 20
# AABB trees' compact rows: C0 and E0 as above, then SIZE
AABB_SIZE = 6
AABB_FCOLS = 7
assert SIZE == N_FCOLS - 1 and AABB_SIZE == AABB_FCOLS - 1  # SIZE is always the last column

# bounding-volume kinds
KIND_AABB = 0
KIND_OBB = 1
KIND_SPHERE = 2
KIND_OBB_SPHERE = 3
# k-DOPs over fixed direction sets (cdcore.bv.kdop): their slabs and realignment data live
# in ``BVH.kdop``; nodes_f holds the AABB of slabs 0..2, a sphere and SIZE.
KIND_KDOP6 = 4
KIND_KDOP14 = 5
KIND_KDOP18 = 6
KIND_KDOP26 = 7
KDOP_KINDS = (KIND_KDOP6, KIND_KDOP14, KIND_KDOP18, KIND_KDOP26)


def fcols(kind: int) -> int:
    """Columns of a packed tree's float rows: compact for AABB trees."""
    return AABB_FCOLS if kind == KIND_AABB else N_FCOLS

# overlap tests
TEST_SAT15 = 0
TEST_SAT6 = 1
TEST_SPHERE = 2
TEST_SPHERE5 = 3
TEST_SPHERE15 = 4
TEST_SLAB = 5  # k-DOP slab-interval test after realignment (cdcore._kdop_traverse)

# separating-axis ids used by counters, traces and histograms:
#   0..2  A's box axes (face normals), 3..5 B's box axes,
#   6..14 A_i x B_j at 6 + 3*i + j, 15 the bounding-sphere test.
# For oriented boxes the axes are sorted long, mid, short, so ids name roles.
AXIS_SPHERE = 15
N_AXES = 16
AXIS_NONE = -1

# traversal trace outcomes
OUT_SEPARATED = 0
OUT_OVERLAP = 1
OUT_LEAF_HIT = 2
OUT_LEAF_MISS = 3

# ---- the traversal core's shared protocol (cdcore._core; distance uses the same slots) ----
# counters: one int64 array per query, N_COUNTERS counters then the exit-axis histogram
CNT_BV_TESTS = 0  # node pairs tested (distance: bounds evaluated)
CNT_PRIM_TESTS = 1  # exact triangle tests (distance: triangle distances)
CNT_LEAF_PAIRS = 2  # leaf pairs whose volumes overlapped: exact queries
CNT_FALSE = 3  # of those, how many found no contact: false alarms (distance: no gain)
CNT_PRIM_CYCLES = 4  # cycle-counter ticks spent in primitive tests
CNT_MAX_STACK = 5  # deepest stack (distance: largest queue)
N_COUNTERS = 6
# histogram slots: box axes 0..15 (above), k-DOP slab ids 0..k/2-1 (k/2 <= 13)
N_HIST = N_AXES
N_STATS = N_COUNTERS + N_HIST

# resumable kernels' status
DONE = 0
BUFFER_FULL = 1  # an output buffer is full: grow it and resume with the returned state

# collision trace rows (int32): node of A, node of B, outcome, separating axis (-1: none),
# the side descended after an overlap (SPLIT_A / SPLIT_B, -1 for separated and leaf pairs)
TR_A = 0
TR_B = 1
TR_OUTCOME = 2
TR_AXIS = 3
TR_SPLIT = 4
TRACE_COLS = 5
SPLIT_NONE = -1
SPLIT_A = 0
SPLIT_B = 1

# ---- a query's plan: one int64 array (PLAN_LEN,) instead of literal-typed arguments ----
# (a literal or a differently typed flag at one call site compiled the traversal once more)
P_KIND = 0  # bounding-volume kind (KIND_*)
P_TEST = 1  # node-pair test (TEST_*)
P_PROGRAM = 2  # axis program of the box tests (_overlap.PROGRAM_*)
P_METHOD = 3  # k-DOP realignment method (_kdop_traverse.REALIGN_*), 0 otherwise
P_FIRST = 4  # 1: stop at the first intersecting triangle pair
P_TRACE = 5  # 1: record every tested node pair
P_EXACT = 6  # 1: exact triangle tests at leaf pairs; 0: report every primitive pair (broad phase)
P_NAXES = 7  # length of the custom axis list (PROGRAM_CUSTOM)
P_AXES = 8  # the custom axis list, at P_AXES .. P_AXES + N_AXES - 1
PLAN_LEN = P_AXES + N_AXES

# ---- a traversal's resumable state (Buffers.state, int64 (3,)) ----
ST_SP = 0  # pairs on the stack
ST_PAIRS = 1  # triangle pairs written
ST_TRACE = 2  # trace rows written
N_STATE = 3

# ---- a call's workspace: one int64 array (cdcore._core.workspace_len) ----
# Everything a query call writes but its pairs and trace rows: the counts (the counters, the
# histogram, then the status: the layout of ``CollisionResult.counts``), the resumable state,
# B's relative transform and the box tests' scratch (float64 bit patterns), the k-DOP
# per-query tables, then the stack (int32 pairs). The caller allocates it once (``Query``: one
# per concurrent call) and the compiled entry allocates nothing.
W_STATUS = N_STATS  # the status slot: 0, or a bad pose (_core.POSE_A_BAD / POSE_B_BAD + code)
W_STATE = N_STATS + 1  # N_STATE slots (ST_*)
W_CYC = W_STATE + N_STATE  # cycle-counter ticks spent in the compiled query (CollisionResult.t_total)
W_R = W_CYC + 1  # R (3, 3) float64
W_T = W_R + 9  # t (3,) float64
W_BOX = W_T + 3  # box scratch (3, 3, 3) float64
W_FIXED = W_BOX + 27  # then qi (k/2, QI_COLS) int64, qf (k/2, qf_cols) float64, stack (rows, 2) int32
