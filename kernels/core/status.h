/* What a kernel's plan says of a problem it refuses: a code, and its text for the caller's error. */
#ifndef IRGRID_STATUS_H
#define IRGRID_STATUS_H

typedef enum {
    IRGRID_OK = 0,
    IRGRID_E_RANK,      /* a spatial rank the kernel does not take */
    IRGRID_E_MODE,      /* an unknown mode, padding or boundary code */
    IRGRID_E_DIMS,      /* a dim that must be positive is not, or shapes that do not fit together */
    IRGRID_E_TAPS,      /* more taps per point than IRGRID_MAX_TAPS */
    IRGRID_E_SIZE,      /* a size past what the kernel indexes */
} irgrid_status;

static inline const char* irgrid_error_text(int status) {
    switch (status) {
    case IRGRID_OK: return "ok";
    case IRGRID_E_RANK: return "unsupported spatial rank";
    case IRGRID_E_MODE: return "unknown mode or padding";
    case IRGRID_E_DIMS: return "dims must be positive and fit together";
    case IRGRID_E_TAPS: return "too many taps per point";
    case IRGRID_E_SIZE: return "a size past what the kernel indexes";
    default: return "unknown error";
    }
}

#endif
