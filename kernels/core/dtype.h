/* The element types a kernel's problem struct names (its `dtype` field). */
#ifndef IRGRID_DTYPE_H
#define IRGRID_DTYPE_H

enum { IRGRID_F32 = 0, IRGRID_F64 = 1 };

#endif
