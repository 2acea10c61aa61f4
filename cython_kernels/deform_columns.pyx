# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Deformable im2col for any number r of spatial dims: the column matrix a GEMM turns into a convolution.

For one batch item, column row (c * K + k) holds, for every output point p of a tile, input channel c
sampled N-linearly at kernel tap k's (offset) position, times the mask:

    pos_d = o_d * stride_d - pad_begin_d + k_d * dilation_d + offset[(g * K + k) * r + d, p]
    col[c * K + k, p] = mask[g * K + k, p] * sum over taps t of w_t * x[c, tap_t]

where g = c // (C / offset_groups). Per (offset group, kernel tap, output point) the taps and weights
(mask included) are computed once into a stack block, then applied to every channel of the group.
Work is split into fixed chunks (offset group x block of points) that write disjoint columns, so the
result never depends on the thread count.

Boundary rules (docs/semantics.md, "DeformConv"):
- BOUNDARY_ZEROS (ONNX DeformConv, OpenVINO bilinear_interpolation_pad=true): taps floor(x) and
  floor(x) + 1, each dropped when outside [0, L);
- BOUNDARY_EDGE (OpenVINO bilinear_interpolation_pad=false, DeformableConvolution-1): a point outside
  [0, L) in any dim gives 0; inside, taps floor(x) and min(ceil(x), L - 1).
A tap whose linear weight is exactly 0 (an integer coordinate) is not read. A NaN coordinate gives a
NaN column value; +-Inf and huge coordinates are outside (0); a point with no tap inside gives 0
whatever its mask.
"""
from cython.parallel cimport prange
from cython cimport floating
from libc.math cimport NAN

from interpolation cimport (
    MAX_TAPS, MAX_RANK, PointStatus, POINT_OK, POINT_ZERO, POINT_NAN, clamp_coordinate, guarded_floor,
    outer_product_taps, weighted_sum,
)

cdef enum Boundary:
    BOUNDARY_ZEROS = 0
    BOUNDARY_EDGE = 1

# Taps per block of points: every channel of the group rereads the block's offsets and weights, so
# they should stay in L1 (1024 taps: 12 KiB in f32, 16 KiB in f64).
cdef Py_ssize_t BLOCK_TAPS = 1024


cdef inline PointStatus linear_taps(floating x, Py_ssize_t length, Py_ssize_t stride, int boundary,
                                    Py_ssize_t* offsets, floating* weights, Py_ssize_t* count) noexcept nogil:
    """The (at most 2) taps of one dim at pixel coordinate x: flat offsets and linear weights."""
    cdef Py_ssize_t lo, hi
    cdef floating frac
    cdef Py_ssize_t n = 0
    if x != x:
        return POINT_NAN
    if boundary == BOUNDARY_EDGE and not (x >= 0 and x < length):
        return POINT_ZERO
    x = clamp_coordinate(x)
    lo = guarded_floor(x)
    frac = x - <floating>lo
    hi = lo + 1
    if boundary == BOUNDARY_EDGE and hi > length - 1:
        hi = length - 1
    if 0 <= lo < length:
        offsets[0] = lo * stride
        weights[0] = 1 - frac
        n = 1
    if frac != 0 and 0 <= hi < length:
        offsets[n] = hi * stride
        weights[n] = frac
        n += 1
    count[0] = n
    return POINT_OK if n > 0 else POINT_ZERO


cdef inline floating tap_sum(const floating* xc, const Py_ssize_t* off, const floating* wt,
                             Py_ssize_t count) noexcept nogil:
    """Sum of wt[t] * xc[off[t]] in a fixed order with a short dependency chain: a balanced tree
    for the 2, 4 and 8 taps of 1-, 2- and 3-D points, four interleaved partial sums otherwise."""
    if count == 4:
        return (wt[0] * xc[off[0]] + wt[1] * xc[off[1]]) + (wt[2] * xc[off[2]] + wt[3] * xc[off[3]])
    if count == 1:
        return wt[0] * xc[off[0]]
    if count == 2:
        return wt[0] * xc[off[0]] + wt[1] * xc[off[1]]
    if count == 8:
        return (((wt[0] * xc[off[0]] + wt[1] * xc[off[1]]) + (wt[2] * xc[off[2]] + wt[3] * xc[off[3]]))
                + ((wt[4] * xc[off[4]] + wt[5] * xc[off[5]]) + (wt[6] * xc[off[6]] + wt[7] * xc[off[7]])))
    return weighted_sum(xc, off, wt, count)


cdef void sample_columns(const floating* x, const floating* offsets, const floating* mask, floating* col,
                         Py_ssize_t rank, const Py_ssize_t* in_dims, const Py_ssize_t* in_strides,
                         const Py_ssize_t* out_dims, const Py_ssize_t* kernel, const Py_ssize_t* strides,
                         const Py_ssize_t* dilations, const Py_ssize_t* pads_begin, Py_ssize_t plane,
                         Py_ssize_t points, Py_ssize_t kernel_size, Py_ssize_t group_channels,
                         bint has_offsets, bint has_mask, int boundary, Py_ssize_t tile_start,
                         Py_ssize_t tile_points, Py_ssize_t group, Py_ssize_t start,
                         Py_ssize_t stop) noexcept nogil:
    """Columns of offset group `group` for output points [start, stop) (absolute point indices).

    x: (C, *in_dims); offsets: (G * K * rank, points); mask: (G * K, points); col: (C * K, tile_points)
    holding points [tile_start, tile_start + tile_points). (stop - start) << rank <= MAX_TAPS.
    """
    cdef Py_ssize_t base[MAX_TAPS]  # (point, dim): o_d * stride_d - pad_begin_d
    cdef Py_ssize_t tap_off[MAX_TAPS]
    cdef floating tap_w[MAX_TAPS]
    cdef Py_ssize_t tap_n[MAX_TAPS]
    cdef Py_ssize_t dim_off[2 * MAX_RANK]
    cdef floating dim_w[2 * MAX_RANK]
    cdef Py_ssize_t dim_n[MAX_RANK]
    cdef Py_ssize_t kidx[MAX_RANK]
    cdef Py_ssize_t n = stop - start, max_taps = 1 << rank
    cdef Py_ssize_t i, d, k, c, q, count, rest, channel
    cdef floating pos, weight
    cdef PointStatus status
    cdef const floating* xc
    cdef floating* row
    for i in range(n):
        rest = start + i
        for d in range(rank - 1, -1, -1):
            base[i * rank + d] = (rest % out_dims[d]) * strides[d] - pads_begin[d]
            rest = rest // out_dims[d]
    for k in range(kernel_size):
        rest = k
        for d in range(rank - 1, -1, -1):
            kidx[d] = (rest % kernel[d]) * dilations[d]
            rest = rest // kernel[d]
        for i in range(n):
            status = POINT_OK
            for d in range(rank):
                pos = <floating>(base[i * rank + d] + kidx[d])
                if has_offsets:
                    pos = pos + offsets[((group * kernel_size + k) * rank + d) * points + start + i]
                status = linear_taps(pos, in_dims[d], in_strides[d], boundary, dim_off + 2 * d, dim_w + 2 * d,
                                     dim_n + d)
                if status == POINT_NAN:
                    break
                if status == POINT_ZERO:  # a NaN in a later dim still makes the point NaN
                    for q in range(d + 1, rank):
                        pos = <floating>(base[i * rank + q] + kidx[q])
                        if has_offsets:
                            pos = pos + offsets[((group * kernel_size + k) * rank + q) * points + start + i]
                        if pos != pos:
                            status = POINT_NAN
                    break
            if status != POINT_OK:
                tap_n[i] = -1 if status == POINT_NAN else 0
                continue
            weight = mask[(group * kernel_size + k) * points + start + i] if has_mask else 1
            tap_n[i] = outer_product_taps(dim_off, dim_w, dim_n, rank, 2, weight, tap_off + i * max_taps,
                                          tap_w + i * max_taps)
        for c in range(group_channels):
            channel = group * group_channels + c
            xc = x + channel * plane
            row = col + (channel * kernel_size + k) * tile_points + (start - tile_start)
            for i in range(n):
                count = tap_n[i]
                if count > 0:
                    row[i] = tap_sum(xc, tap_off + i * max_taps, tap_w + i * max_taps, count)
                else:
                    row[i] = NAN if count < 0 else 0


def deformable_columns(const floating[::1] x, const floating[::1] offsets, const floating[::1] mask,
                       floating[::1] col, Py_ssize_t channels, const Py_ssize_t[::1] in_dims,
                       const Py_ssize_t[::1] out_dims, const Py_ssize_t[::1] kernel,
                       const Py_ssize_t[::1] strides, const Py_ssize_t[::1] dilations,
                       const Py_ssize_t[::1] pads_begin, Py_ssize_t offset_groups, bint has_offsets,
                       bint has_mask, bint edge_rule, Py_ssize_t tile_start, Py_ssize_t tile_stop,
                       int num_threads) -> None:
    """Fill col (C * K, tile_stop - tile_start) for output points [tile_start, tile_stop) of one item.

    x: (C, *in_dims) flat; offsets (G * K * r, points) and mask (G * K, points) flat, ignored (any
    length) unless has_offsets / has_mask. edge_rule: BOUNDARY_EDGE, else BOUNDARY_ZEROS. The 2**r
    taps of a point must fit one block of MAX_TAPS (r <= 12).
    """
    cdef Py_ssize_t rank = in_dims.shape[0]
    cdef Py_ssize_t plane = 1, points = 1, kernel_size = 1, d, chunk, group, start, block
    cdef Py_ssize_t blocks, n_chunks, tile_points = tile_stop - tile_start, group_channels
    cdef Py_ssize_t[MAX_RANK] in_strides
    cdef int boundary = BOUNDARY_EDGE if edge_rule else BOUNDARY_ZEROS
    if rank < 1 or rank > MAX_RANK or (<Py_ssize_t>1 << rank) > MAX_TAPS:
        raise ValueError(f"{rank} spatial dims: 2**rank taps per point exceed the kernel's {MAX_TAPS}")
    if (out_dims.shape[0] != rank or kernel.shape[0] != rank or strides.shape[0] != rank
            or dilations.shape[0] != rank or pads_begin.shape[0] != rank):
        raise ValueError("every spatial parameter needs one value per spatial dim")
    if offset_groups < 1 or channels % offset_groups:
        raise ValueError("channels must be a multiple of offset_groups")
    for d in range(rank - 1, -1, -1):
        if in_dims[d] < 1 or out_dims[d] < 1 or kernel[d] < 1 or strides[d] < 1 or dilations[d] < 1:
            raise ValueError("dims, kernel, strides and dilations must be positive")
        in_strides[d] = plane
        plane *= in_dims[d]
        points *= out_dims[d]
        kernel_size *= kernel[d]
    if not 0 <= tile_start <= tile_stop <= points:
        raise ValueError("tile outside the output points")
    if x.shape[0] != channels * plane or col.shape[0] != channels * kernel_size * tile_points:
        raise ValueError("data or column buffer size does not match the shapes")
    if has_offsets and offsets.shape[0] != offset_groups * kernel_size * rank * points:
        raise ValueError("offset buffer size does not match the shapes")
    if has_mask and mask.shape[0] != offset_groups * kernel_size * points:
        raise ValueError("mask buffer size does not match the shapes")
    if tile_points == 0 or channels == 0:
        return
    group_channels = channels // offset_groups
    block = max(1, BLOCK_TAPS >> rank)
    blocks = (tile_points + block - 1) // block
    n_chunks = offset_groups * blocks
    num_threads = max(min(num_threads, n_chunks), 1)
    if num_threads == 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            for chunk in range(n_chunks):
                group = chunk // blocks
                start = tile_start + (chunk - group * blocks) * block
                sample_columns(&x[0], &offsets[0], &mask[0], &col[0], rank, &in_dims[0], in_strides,
                               &out_dims[0], &kernel[0], &strides[0], &dilations[0], &pads_begin[0], plane,
                               points, kernel_size, group_channels, has_offsets, has_mask, boundary,
                               tile_start, tile_points, group, start, min(start + block, tile_stop))
        return
    for chunk in prange(n_chunks, nogil=True, schedule="dynamic", num_threads=num_threads):
        group = chunk // blocks
        start = tile_start + (chunk - group * blocks) * block
        sample_columns(&x[0], &offsets[0], &mask[0], &col[0], rank, &in_dims[0], in_strides,
                       &out_dims[0], &kernel[0], &strides[0], &dilations[0], &pads_begin[0], plane,
                       points, kernel_size, group_channels, has_offsets, has_mask, boundary,
                       tile_start, tile_points, group, start, min(start + block, tile_stop))
