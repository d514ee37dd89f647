"""The peak-RSS bound of the commands that read or write datasets (docs/bench/streaming.md).

    peak RSS  <=  R0 + H

R0 is the process without data: the code and data pages of `mhalearn` and its
libraries, its stacks, and the few small allocations every command makes
(instance, options, JSON). It does not depend on the dataset; it is measured as
the peak RSS of `mhalearn stage1 --x X --y Y --samples 1` (about 10 MB here).

H bounds the heap the command holds at its peak: the largest set of arrays it
has allocated at once, summed over every array the code allocates at that
point, each counted with P bytes of allocator overhead. None of it depends on
N, the number of samples in the files: a dataset is read block by block
(NpyDatasetSource, NpyReader), and what a stage holds is set by d, k, m and its
options. For `learn`, two counts enter that the options cap only loosely and
the report records: the slabs C_r of each round's body and the events E of
each stage-3 round (see learn_heap).

Every function returns bytes. The constants are the code's:
"""
import math

P = 64                    # allocator overhead per heap block: glibc's 16-byte header and 16-byte
                          # rounding, plus Eigen's up-to-32-byte alignment offset (AVX: 32-byte alignment)
STAGING = 1 << 20         # kNpyStagingBytes (src/data/npy.hpp): NpyReader's float32 / int8 staging block
BLOCK_LABEL_BYTES = 16 << 20  # kBlockLabelBytes (src/commands/data_commands.cpp): labels per block of sample/forward
STAGE1_BATCH = 64 * 4096  # stage 1's super-batch (stage1_wsum.cpp: 64 blocks of kStage1Block)
SCULPT_BATCH = 65536      # stage2_sculpt.cpp
MARGIN_BATCH = 262144     # stage3_margin.cpp
RESCULPT_PILOT = 20000    # ResculptOptions::pilot_samples
MARGIN_PILOT = 100000     # MarginOptions::pilot_samples
VALIDATION = 1000         # LearnOptions::validation_samples
MAX_TUPLES = 20000        # NetOptions::max_tuples
DENSE_MAX_PARAMETERS = 1024  # PolishOptions::dense_max_parameters
SIZEOF_MATD = 24          # an Eigen dynamic matrix object: data pointer, rows, cols
SIZEOF_VECTOR = 24        # a std::vector object


def mat(rows, cols=1):
    """An Eigen matrix or std::vector<double> of rows × cols doubles on the heap."""
    return 8 * rows * cols + P if rows * cols > 0 else 0


def words(d):
    return (d + 63) // 64


def per_sample(k, d, gaussian):
    """Bytes of one drawn sample in a LabelledBatch: X bit-packed (Boolean) or as doubles, Y as doubles."""
    return (8 * k * d if gaussian else 8 * k * words(d)) + 8 * k * d


def batch(n, k, d, gaussian):
    """A LabelledBatch of n samples (two arrays)."""
    return n * per_sample(k, d, gaussian) + 2 * P if n > 0 else 0


def forward_scratch(k, d, m, threads):
    """FastForward::run: one scratch vector per thread, k·(2·m·d + d + 1) doubles."""
    return threads * mat(k * (2 * m * d + d + 1))


def block_samples(k, d):
    return max(1, BLOCK_LABEL_BYTES // (8 * k * d))


def stage1_heap(n, k, d, gaussian, samples, threads):
    """`stage1 --x --y --samples S`: one super-batch, the staging block while it is read, the
    64 per-block partial sums (two d×d each) and each thread's k×d, 1×d and d×d temporaries."""
    b = min(samples, STAGE1_BATCH, n)
    return (batch(b, k, d, gaussian) + STAGING + 2 * 64 * (mat(d, d) + SIZEOF_MATD)
            + threads * (2 * mat(k, d) + 2 * mat(1, d) + mat(d, d)))


def sample_heap(n, k, d, m, gaussian, threads):
    """`sample --n N`: one block drawn from the oracle (inputs and labels), its inputs as int8 for
    the file (Boolean), and the forward pass's per-thread scratch."""
    b = min(n, block_samples(k, d))
    x8 = 0 if gaussian else mat(b * k * d) // 8 + P
    return batch(b, k, d, gaussian) + x8 + forward_scratch(k, d, m, threads)


def forward_heap(n, k, d, m, gaussian, threads, reference=False):
    """`forward --x`: one block of inputs as read (int8, or doubles with the float32 staging
    block), packed into a batch, and its outputs; the reference path returns a second output
    array before the first is freed."""
    b = min(n, block_samples(k, d))
    inputs = (b * k * d + P + 8 * b * k * words(d) + P) if not gaussian else mat(b * k * d) + STAGING
    outputs = mat(b * k * d) * (2 if reference else 1)
    return inputs + outputs + forward_scratch(k, d, m, threads)


def design_count(m):
    """The exhaustive net's grid points G and tuples T (stage6_net.cpp, exhaustive_level)."""
    axes = m - 1
    if axes == 0:
        return 1, 1
    g = 2
    while math.comb(int((g + 1) ** axes), m) <= MAX_TUPLES:
        g += 1
    grid = g ** axes
    return grid, math.comb(grid, m)


def learn_heap(n, k, d, m, gaussian, threads, constraints, events, stage1_samples=200000,
               sculpt_samples=2000000, crude_sculpt_samples=400000, margin_samples=20000000,
               polish=True, reference=False):
    """`learn --x --y --m M` (the paper's stages and polishing), by phase. `constraints`: the
    slabs C_r of every round's body, `events`: the events E of every stage-3 round, both as the
    report records them. A priori, C_r <= 3d² + k(k−1)·65536 (the target, then at most one
    batch's rows) and E <= 16d + k·262144; in practice both stay near their targets.

    Held throughout: the validation batch and every finished round's products (body,
    least-squares centre, hull, the net's layers). The reference paths (CLP's QP and LP on the
    selected body, run when d² <= 400 unless --no-reference) are not covered: reference must
    be False."""
    if reference:
        raise ValueError("the bound does not cover the reference paths' CLP working memory")
    nn = d * d
    avail = n
    held = batch(min(VALIDATION, avail), k, d, gaussian)
    body = lambda c: c * (mat(nn) + 80)  # a Slab (vector of d² doubles, b, eta) and 2x the vector's slot
    rounds = sum(body(c) + (2 * m + 4) * mat(nn) + 4 * m * mat(d, d) for c in constraints)
    base = held + rounds
    temps = threads * 8 * mat(max(k, d), d)  # per-thread k×d, d×d and k×k temporaries of the loops
    phases = {}
    # Stage 1.
    phases["1"] = stage1_heap(n, k, d, gaussian, stage1_samples, threads)
    # Stages 2/4: the pilot (its certified residuals), then sculpting batches with one
    # outcome record per sample and the slabs in flight; then the least-squares centre.
    p2 = min(RESCULPT_PILOT, avail)
    phases["2/4 pilot"] = batch(p2, k, d, gaussian) + STAGING + p2 * (SIZEOF_VECTOR + mat(k)) + mat(p2 * k) + temps
    b2 = min(SCULPT_BATCH, max(sculpt_samples, crude_sculpt_samples), avail)
    cmax = max(constraints, default=0)
    phases["2/4 sculpt"] = batch(b2, k, d, gaussian) + STAGING + b2 * 88 + cmax * (112 + P) + temps
    r = max(cmax, nn)
    phases["2/4 centre"] = 2 * mat(r, nn) + 3 * mat(r) + 12 * mat(nn + 1, nn + 1)
    # Stage 6: the training and validation batches, their matrix copies, the exhaustive net's
    # designs (one d×d Θ and two (N·k)×d blocks per grid point), its tuples and errors, the
    # refinement's moved designs and each thread's normal equations.
    n6 = min(max(64, 8 * m * d // k), avail)
    grid, tuples = design_count(m)
    design = mat(d, d) + 2 * mat(n6 * k, d) + 3 * SIZEOF_MATD
    copies = 2 * (n6 * (SIZEOF_MATD + mat(k, d)) + mat(n6 * k, d))
    phases["6"] = (2 * batch(n6, k, d, gaussian) + STAGING + copies + grid * (design + SIZEOF_VECTOR + mat(m - 1))
                   + tuples * (SIZEOF_VECTOR + mat(m) + 8) + (m * 3 ** (m - 1) + m) * design
                   + threads * (2 * mat(m * d, m * d) + 2 * mat(m * d, d) + mat(n6 * k, d)) + mat(n6 * k, d))
    # Stage 3: the pilot and its margins, then batches with one event list per sample; every
    # event keeps a token and a label row; then the least squares on the events.
    p3 = min(MARGIN_PILOT, avail)
    phases["3 pilot"] = batch(p3, k, d, gaussian) + STAGING + mat(p3 * k) + temps
    b3 = min(MARGIN_BATCH, margin_samples, avail)
    emax = max(events, default=0)
    phases["3"] = (batch(b3, k, d, gaussian) + STAGING + b3 * SIZEOF_VECTOR + emax * (2 * mat(d) + 2 * 96 + 96 + P)
                   + 4 * mat(emax, d) + temps)
    # Polishing: its batches, their matrix copies, two variable-projection states (Θs, design,
    # residual), and the linear model: the dense Jacobian with its QR and normal equations, or
    # the matrix-free operator's per-sample caches and head blocks.
    if polish:
        pairs = k * (k - 1)
        npol = max(256, 16 * m * d // k, (2 * nn + pairs - 1) // pairs)
        vpol = 256
        rows = npol * k
        state = m * mat(d, d) + mat(rows, m * d) + mat(rows, d) + 2 * m * mat(d, d)
        common = (batch(npol, k, d, gaussian) + batch(vpol, k, d, gaussian) + STAGING
                  + npol * (SIZEOF_MATD + mat(k, d)) + mat(rows, d) + 3 * state + mat(vpol * k, d))
        if m * nn <= DENSE_MAX_PARAMETERS:
            model = (mat(rows * d, m * nn) + 3 * mat(rows, m * d) + mat(rows * d) + 4 * mat(m * nn, m * nn)
                     + threads * mat(m * d, m * nn) + 3 * mat(m * nn))
        else:
            model = (npol * m * (mat(k, k) + mat(k, d) + 2 * SIZEOF_MATD) + mat(rows, m * d) * 3
                     + 2 * m * mat(nn, nn) + threads * mat(nn, nn) + 12 * mat(m * nn) + 2 * mat(rows, d))
        phases["polish"] = common + model + temps
    return base + max(phases.values()), phases
