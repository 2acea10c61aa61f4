/* The vector GridSample of simd.h for one float type: included once per type with FT (the float),
   LANES, VF / VI (float and int32 index vectors) and the operation macros defined, which it undefines
   at the end. One part per concern, in this order (each uses the ones before it). */
#include "simd_taps.h"
#include "simd_gather_path.h"
#include "simd_interleave.h"
#include "simd_cubic.h"
#include "simd_binning.h"

#undef FT
#undef SFX
#undef LANES
#undef VF
#undef VI
#undef SET1
#undef ZERO
#undef ADD
#undef SUB
#undef MUL
#undef FMADD
#undef VMIN
#undef VMAX
#undef AND
#undef ANDNOT
#undef OR
#undef BLEND
#undef CMP
#undef FLOOR
#undef RINT
#undef MOVEMASK
#undef LOADU
#undef STOREU
#undef STREAM
#undef MASKSTORE
#undef TOINT
#undef ISET1
#undef IADD
#undef IMUL
#undef GATHER
#undef IEXTRACT
#undef DENORMALIZE
#undef CUBIC
#undef NATIVE_DENORMALIZE
#undef NATIVE_CUBIC
#undef TRANSPOSE
#undef ISTOREU
#undef KEEP_INDEX
#undef ISHL5
