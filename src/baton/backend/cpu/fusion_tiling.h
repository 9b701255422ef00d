// The CPU's numbers for fused elementwise steps (compiler/fused_tiles.h
// takes them as parameters): the fused runner tiles with them, and buffer
// assignment counts the scratch they need.
#pragma once

#include "baton/compiler/fused_tiles.h"

namespace baton::cpu {

inline constexpr compiler::FusionTiling kFusionTiling = {
    // A tile's working set -- the input and output tiles streaming through
    // plus the scratch slots -- must stay in the 32 KiB L1 data cache: at
    // 4096 float32 elements (16 KiB a tile) x*2+1 on 64 MiB ran at 14 GB/s,
    // at 1024 and 2048 at 30 GB/s (jit_bench, same run).
    .max_tile_elements = 1024,
    // A tile of float64 with four slots lives on the running thread's stack.
    .local_scratch_bytes = 32 * 1024,
};

}  // namespace baton::cpu
