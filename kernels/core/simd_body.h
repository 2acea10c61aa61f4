/* The vector GridSample of simd.h for one float type: included once per type with FT (the float),
   LANES, VF / VI (float and int32 index vectors) and the operation macros defined, which it undefines
   at the end. One part per concern, in this order (each uses the ones before it). */
#include "simd_taps.h"
#include "simd_gather_path.h"
#include "simd_interleave.h"
#include "simd_cubic.h"
#include "simd_binning.h"
#if LANES == 8  /* f32: cubic's one-channel pixels by 8 points (16: the 16-lane section's simd_cubic_points.h) */
#include "simd_cubic_points8.h"
#endif

#include "simd_undef.h"
