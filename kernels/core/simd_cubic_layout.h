/* The scratch of cubic's one-channel pixels (simd_cubic_points.h, simd_cubic_points8.h; grid_sample.c's
   cubic_points): its layouts, plain C, and where a channel's pixels lie in them. A part of simd.h, before
   the vector sections. The copies stay out of line (once a call, beside runs over every point): inlined
   into grid_sample_body.h's interleave_unit they grew it 2.3x (benchmarks/README.md, "Cubic with
   reflection padding by points"). */

/* A channel's layout (rank R, 2 or 3; `mirrored`: border and reflection padding's, else zeros'): a row's
   and a plane's floats (2-D: one row), the floats between neighbours along each dim (outermost first) for
   irgrid_cubic_window, a channel's floats (also the 8-channel row scratch's pixels, grid_sample.c's
   row_pixels), and irgrid_cubic_window's zero window (a pixel index): the first of the 4 trailing zero
   planes (2-D: rows). */
typedef struct {
    irgrid_index pitch, plane, pitches[3], size;
    int no_taps;
} irgrid_cubic_layout;

static inline irgrid_cubic_layout irgrid_cubic_layout_of(irgrid_index R, const irgrid_index* dims, int mirrored) {
    const irgrid_index pad = mirrored ? 6 : 3;  /* pixels around a row */
    irgrid_cubic_layout at;
    at.pitch = dims[R - 1] + pad;
    at.plane = R == 3 ? (dims[1] + pad) * at.pitch : at.pitch;
    at.pitches[0] = at.plane;
    at.pitches[1] = R == 3 ? at.pitch : 1;
    at.pitches[2] = 1;
    at.size = (dims[0] + (mirrored ? 6 : 7)) * at.plane;
    at.no_taps = (int)((dims[0] + 3) * at.plane);
    return at;
}

/* Planes x + c * x_cstride (c < channels; rank 2 or 3, dims outermost first) into s as simd_cubic_points.h
   describes, channel c at s + c * irgrid_cubic_layout_of(rank, dims, 0).size. */
static __attribute__((noinline)) void irgrid_interleave_padded_f32x1(const float* x, irgrid_index channels,
        irgrid_index x_cstride, irgrid_index rank, const irgrid_index* dims, float* s) {
    const irgrid_index depth = rank == 3 ? dims[0] : 1, height = dims[rank - 2], width = dims[rank - 1];
    const irgrid_index pitch = width + 3, plane = (height + 3) * pitch;
    const irgrid_index lead = rank == 3 ? 3 * plane : 0, size = rank == 3 ? (depth + 7) * plane : (height + 7) * pitch;
    irgrid_index c, z, r;
    float* t;
    for (c = 0; c < channels; c++, x += x_cstride, s += size) {
        memset(s, 0, (size_t)lead * sizeof(float));
        for (z = 0; z < depth; z++) {
            t = s + lead + z * plane;  /* 3 zero rows, then the rows, each after 3 zeros */
            memset(t, 0, (size_t)(3 * pitch) * sizeof(float));
            for (r = 0; r < height; r++) {
                memset(t + (r + 3) * pitch, 0, 3 * sizeof(float));
                memcpy(t + (r + 3) * pitch + 3, x + (z * height + r) * width, (size_t)width * sizeof(float));
            }
        }
        t = s + lead + depth * plane;  /* 2-D: the 4 zero rows; 3-D: the 4 zero planes */
        memset(t, 0, (size_t)(size - lead - depth * plane) * sizeof(float));
    }
}

/* Border and reflection padding's layout: every dim's 3 pixels past each edge hold the pixels the padding
   maps them to (interpolation.h's irgrid_pad_tap: border the edge pixel, reflection its mirror image; a
   row: pixels -3..-1, the W pixels, W..W + 2; then the rows, and the planes, likewise), (H + 6) * (W + 6)
   or (D + 6) * (H + 6) * (W + 6) floats a channel (irgrid_cubic_layout_of(rank, dims, 1).size). A point's
   taps are floor - 1 .. floor + 2, each padded on its own: border's with floor clamped to [-2, L] (beyond,
   all four taps are the edge pixel) read those values at constant strides from the first; reflection's
   read them there while the taps lie within 3 pixels of the dim, and past that, wholly on one side,
   read the mirrored run of 4 pixels inside it (irgrid_cubic_mirror_window). */
static __attribute__((noinline)) void irgrid_mirror_padded_f32x1(const float* x, irgrid_index channels,
        irgrid_index x_cstride, irgrid_index rank, const irgrid_index* dims, int padding, int align, float* s) {
    const irgrid_index depth = rank == 3 ? dims[0] : 1, height = dims[rank - 2], width = dims[rank - 1];
    const irgrid_index pitch = width + 6, plane = (height + 6) * pitch;
    const irgrid_index size = rank == 3 ? (depth + 6) * plane : plane;
    irgrid_index c, z, r, k;
    float *t, *row;
    for (c = 0; c < channels; c++, x += x_cstride, s += size) {
        t = rank == 3 ? s + 3 * plane : s;  /* the volume's first plane */
        for (z = 0; z < depth; z++, t += plane) {
            for (r = 0; r < height; r++) {
                const float* in = x + (z * height + r) * width;
                row = t + (r + 3) * pitch;
                memcpy(row + 3, in, (size_t)width * sizeof(float));
                for (k = 0; k < 3; k++) {
                    row[k] = in[irgrid_pad_tap(k - 3, width, padding, align)];
                    row[width + 3 + k] = in[irgrid_pad_tap(width + k, width, padding, align)];
                }
            }
            for (k = 0; k < 3; k++) {
                memcpy(t + k * pitch, t + (irgrid_pad_tap(k - 3, height, padding, align) + 3) * pitch,
                       (size_t)pitch * sizeof(float));
                memcpy(t + (height + 3 + k) * pitch,
                       t + (irgrid_pad_tap(height + k, height, padding, align) + 3) * pitch,
                       (size_t)pitch * sizeof(float));
            }
        }
        for (k = 0; rank == 3 && k < 3; k++) {
            memcpy(s + k * plane, s + (irgrid_pad_tap(k - 3, depth, padding, align) + 3) * plane,
                   (size_t)plane * sizeof(float));
            memcpy(s + (depth + 3 + k) * plane, s + (irgrid_pad_tap(depth + k, depth, padding, align) + 3) * plane,
                   (size_t)plane * sizeof(float));
        }
    }
}
