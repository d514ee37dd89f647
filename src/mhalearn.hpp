// mhalearn's public C++ surface in one include: installed as
// <mhalearn/mhalearn.hpp> (cmake/install.cmake), linked as mhalearn::mhalearn.
//
// The headers below include each other as "model/layer.hpp"; the installed
// package puts include/mhalearn on the include path so those names resolve.
// Everything is in namespace mha. Functions that can fail on bad input return
// a result with `ok`/`error` (one line) or an error string, never throw on it.
#pragma once

#include "version.hpp"  // kVersion, kGitCommit, the build's arithmetic

// The layer and its instance (MATH.md §1), instance files, .npy files.
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "model/layer.hpp"

// Instances: random generation under the conditions of MATH.md §2, their
// report, and import of PyTorch nn.MultiheadAttention weights.
#include "model/conditions.hpp"
#include "model/import_attention.hpp"
#include "model/instance_gen.hpp"

// Samples and forward passes: fast (double) and reference (MPFR).
#include "model/inputs.hpp"
#include "data/oracle.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"

// The stages of MATH.md §3, each runnable alone, and the learner that wires them.
#include "learn/evaluate.hpp"
#include "learn/learner.hpp"
#include "stages/polish/polish.hpp"
#include "stages/stage1/wsum.hpp"
#include "stages/stage2/sculpt.hpp"
#include "stages/stage3/margin.hpp"
#include "stages/stage4/resculpt.hpp"
#include "stages/stage5/span.hpp"
#include "stages/stage6/net.hpp"
#include "verify/verify.hpp"
