/*
 * The text of a float or double in the shortest form that reads back to the
 * same value (format-spec/ptl-format.md section 5.6's field text, ptlog's
 * dump and JSON): the fewest significant digits that strtod (strtof) maps
 * back to the exact bits, the closest to the value when several have that
 * many, laid out as printf's %g lays them out at a precision of at least 15
 * (6 for a float) or the digit count if more: "0.000231", "8e-06", "1500",
 * "1e+15", "1234567890123456", "5e-324", "-0", "nan", "inf", "-inf". Pure:
 * no I/O, no global state, no allocation.
 */
#ifndef TRACELOG_FORMAT_DOUBLE_TEXT_H
#define TRACELOG_FORMAT_DOUBLE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Room either function needs at out: the text is at most 24 bytes
 * ("-2.2250738585072014e-308"), but digits are copied in blocks that may
 * write past its end. No NUL is written.
 */
#define TL_DOUBLE_TEXT_MAX 48

/* Writes v's text to out[0 .. TL_DOUBLE_TEXT_MAX) and returns its length. */
size_t tl_double_text(double v, char *out);
size_t tl_float_text(float v, char *out);

/*
 * The shortest digits of a finite v > 0 (or float widened, with its own
 * precision when is_f32): v reads back from digits * 10^exp10, digits has no
 * trailing zero. For tests.
 */
void tl_double_shortest(double v, int is_f32, uint64_t *digits, int *exp10);

#endif
