/* What the running CPU offers the kernels, and how much of it the process allows them: the one place the
   C core asks CPUID and the environment (each answer probed once per translation unit, then cached).

   The instruction sets a process allows (irgrid_isa_allowed), as OpenVINO's CPU plugin reads them, so
   that one setting caps OpenVINO's kernels and irgrid's alike, in irgrid's runtime and inside OpenVINO:
   - ONEDNN_MAX_CPU_ISA, else DNNL_MAX_CPU_ISA (oneDNN's dispatcher control, which the plugin's own JIT
     kernels follow too), any case: "sse41" or "avx" leave irgrid's portable scalar paths, "avx2",
     "avx2_vnni" or "avx2_vnni_2" its AVX2+FMA paths (8 f32 lanes, 8-channel pixels), anything else
     (the AVX-512 and AMX levels, "default", a value oneDNN does not know) every path the CPU runs;
   - IRGRID_SIMD=0: the scalar paths, whatever the above says.
   Every path gives results within the tolerances docs/semantics.md states; the vector paths of one
   width or the other give the same bits (tests/ops/test_grid_sample_simd.py). */
#ifndef IRGRID_CPU_H
#define IRGRID_CPU_H

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define IRGRID_CPU_X86 1
#include <cpuid.h>
#endif

enum { IRGRID_ISA_SCALAR = 0, IRGRID_ISA_AVX2 = 1, IRGRID_ISA_ALL = 2 };

/* The level an ISA cap's value allows (compared without case, as oneDNN does). */
static inline int irgrid_isa_level(const char* value) {
    static const char* const scalar[] = {"sse41", "avx"};
    static const char* const avx2[] = {"avx2", "avx2_vnni", "avx2_vnni_2"};
    char name[16];
    size_t i, n = strlen(value);
    if (n >= sizeof(name))
        return IRGRID_ISA_ALL;
    for (i = 0; i <= n; i++)
        name[i] = (char)(value[i] >= 'A' && value[i] <= 'Z' ? value[i] - 'A' + 'a' : value[i]);
    for (i = 0; i < sizeof(scalar) / sizeof(scalar[0]); i++)
        if (strcmp(name, scalar[i]) == 0)
            return IRGRID_ISA_SCALAR;
    for (i = 0; i < sizeof(avx2) / sizeof(avx2[0]); i++)
        if (strcmp(name, avx2[i]) == 0)
            return IRGRID_ISA_AVX2;
    return IRGRID_ISA_ALL;
}

/* The most the process allows: IRGRID_ISA_SCALAR, _AVX2 or _ALL (the environment, read once). */
static inline int irgrid_isa_allowed(void) {
    static int state = -1;
    if (state < 0) {
        const char* simd = getenv("IRGRID_SIMD");
        const char* cap = getenv("ONEDNN_MAX_CPU_ISA");
        if (!cap || !*cap)
            cap = getenv("DNNL_MAX_CPU_ISA");
        state = simd && strcmp(simd, "0") == 0 ? IRGRID_ISA_SCALAR
                : cap && *cap                  ? irgrid_isa_level(cap)
                                               : IRGRID_ISA_ALL;
    }
    return state;
}

/* 1 when the CPU has AVX2 and FMA and the process allows them: the kernels' 8-lane vector paths. */
static inline int irgrid_cpu_avx2(void) {
    static int state = -1;
    if (state < 0) {
        state = 0;
#ifdef IRGRID_CPU_X86
        __builtin_cpu_init();
        state = irgrid_isa_allowed() >= IRGRID_ISA_AVX2 && __builtin_cpu_supports("avx2")
                && __builtin_cpu_supports("fma");
#endif
    }
    return state;
}

/* 1 when the CPU has AVX-512 F, VL, BW and DQ and the process allows them: the 16-lane paths. */
static inline int irgrid_cpu_avx512(void) {
    static int state = -1;
    if (state < 0) {
        state = 0;
#ifdef IRGRID_CPU_X86
        state = irgrid_isa_allowed() >= IRGRID_ISA_ALL && irgrid_cpu_avx2() && __builtin_cpu_supports("avx512f")
                && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
                && __builtin_cpu_supports("avx512dq");
#endif
    }
    return state;
}

/* AMD's CPU family (0x17 Zen 1 and 2, 0x19 Zen 3 and 4, 0x1A Zen 5), 0 on other vendors' CPUs. */
static inline unsigned irgrid_cpu_amd_family(void) {
    static int state = -1;
    if (state < 0) {
        state = 0;
#ifdef IRGRID_CPU_X86
        unsigned eax = 0, ebx, ecx, edx, family;
        __builtin_cpu_init();
        if (__builtin_cpu_is("amd")) {
            __get_cpuid(1, &eax, &ebx, &ecx, &edx);
            family = (eax >> 8) & 0xF;
            state = (int)(family + (family == 0xF ? (eax >> 20) & 0xFF : 0));
        }
#endif
    }
    return (unsigned)state;
}

/* The software prefetches this CPU gains from (a mask of these):
   - IRGRID_PREFETCH_WINDOWS, unless the CPU is AMD's: a run of items (RAFT's lookups) prefetches the
     pairs of blocks whose points lie close together, as in a window (simd_pairs.h). Scattered blocks
     are prefetched on every CPU. Measured on Zen 5, where the hardware's prefetchers cover windows and
     a block's 32 prefetch instructions cost more than they saved, and on a Cascade Lake Xeon, where
     prefetched windows took 0.70-0.81x the time (benchmarks/README.md, "Zen 5: the pair taps, prefetch
     by spread").
   - IRGRID_PREFETCH_ROWS, unless the CPU is AMD's Zen 5 or later (family 0x1A on): binned 3-D cubic
     prefetches the rows the next block's points read first (simd_cubic.h, irgrid_prefetch_last_rows):
     0.82-0.98x the time on Zen 4, 1.14-1.17x on Zen 5 (benchmarks/README.md, "Zen 5: binned rows
     unprefetched"). */
enum { IRGRID_PREFETCH_WINDOWS = 1, IRGRID_PREFETCH_ROWS = 2 };
static inline int irgrid_cpu_prefetches(void) {
    const unsigned amd = irgrid_cpu_amd_family();
    return !amd ? IRGRID_PREFETCH_WINDOWS | IRGRID_PREFETCH_ROWS : amd >= 0x1A ? 0 : IRGRID_PREFETCH_ROWS;
}

/* Blocks of 16 points whose taps a few-channel run computes before it reads any (at most 8): the 16-lane
   pair run outside runs of items (simd_pairs.h's PAIRS_BATCH, simd_pairs_pixels.h) and cubic's run by
   points (simd_cubic_points.h). 4 (64 points) on AMD's family 0x19, of which Zen 4 runs this 512-bit code,
   else 8. On Zen 4, the pair run (2-D bilinear and 3-D trilinear of one to three channels, `ab.py
   --paired`, 30 pairs): 4 blocks took 0.94-0.97x the time of 8 on random grids at 2 threads and
   0.94-0.99x at 1 thread, 0.98-1.03x on smooth ones; 2 blocks 0.96-1.12x, 16 blocks 1.04-1.07x
   (benchmarks/README.md, "Zen 4 again: the build since run 96, 16-channel pixels, the pair run's batch");
   cubic's run (bicubic of one to three channels, tricubic of one channel, 16 pairs): 4 took 0.95-0.98x on
   random grids at 2 threads (tricubic 1.00x) and 0.99-1.01x on smooth ones, at one thread 0.96-0.99x and
   0.99-1.00x; 2 took 0.93-1.04x ("Zen 4: cubic's row loads by inserts"). 8 was chosen on Zen 5 (simd_pairs.h's
   PAIRS_BATCH says how); not measured on Intel cores, which keep it. */
static inline int irgrid_cpu_batch_blocks(void) { return irgrid_cpu_amd_family() == 0x19 ? 4 : 8; }

/* Whether workers that sample one channel group's scratch together, on a scattered grid, lose to each
   sampling a smaller group of its own: on AMD's family 0x19 (Zen 4; Zen 3, also 0x19, has no AVX-512 and
   so never reaches the 16-channel pixels this decides about). There binned 3-D cubic of 9 to 16 channels
   on random grids at 2 threads took 0.84-0.99x the time in two groups of 8 channels, one a worker, as in
   one scratch of 16-channel pixels that both workers read (7 volumes, 20 pairs in one process; 0.59x on
   one whose shared calls spiked to 1.5x; in a phase when the host's second vCPU lagged, 1.00-1.10x); on
   Zen 5 the shared 16-channel pixels won, 0.65-0.90x the time of 8-channel ones (benchmarks/README.md,
   "Zen 4: a channel group a worker for binned 3-D cubic"). Why, not established (no performance counters
   there): every worker's chunks sweep the whole shared volume, and on Zen 4 a line another core holds
   costs more to read than one from L3 ("Nearest of few channels: a shared scratch for local grids"
   measured that cost on random 2-D grids). */
static inline int irgrid_cpu_groups_apart(void) { return irgrid_cpu_amd_family() == 0x19; }

/* Whether cubic's run by points (simd_cubic_points.h) puts a row's 16 loads of 4 floats in place by masked
   128-bit broadcasts (a load and a blend each) rather than by inserts (a load and a shuffle each): not on
   AMD's family 0x19 (Zen 4; Zen 3 has no AVX-512 and runs 8 points a vector). On Zen 5 broadcasts took
   0.83-0.85x the time on tricubic of one channel's random grid and 0.87-0.93x on bicubic of two and three
   channels' random grids (benchmarks/README.md, "Cubic's row loads by broadcasts"); on Zen 4 inserts took
   0.94x (smooth) and 0.96x (random) on tricubic of one channel at 1 and 2 threads, bicubic of one to
   three channels 0.96-1.01x ("Zen 4: cubic's row loads by inserts"). Intel's server
   cores, not measured, keep broadcasts. */
static inline int irgrid_cpu_row_broadcasts(void) { return irgrid_cpu_amd_family() != 0x19; }

#endif
