/*
 * Reading a conformance vector with tracelog's reader, into the terms of
 * the specification (vec_reading): what the runner compares with the
 * vector's expected files.
 */
#ifndef TL_VEC_READ_H
#define TL_VEC_READ_H

#include "tracelog/reader.h"
#include "vec_out.h"

/* Reader options for a vector: the defaults, or the limits of NAME.limits.json when it exists. */
int vec_options(const char *ptl_path, tracelog_reader_options *opt);

/*
 * Reads the .ptl file at path (seekable, or through a pipe when `piped`)
 * into out. 0, or -1 with a message on stderr when the reader failed
 * (an I/O or memory error: not a property of the file).
 */
int vec_read(const char *path, int piped, const tracelog_reader_options *opt, vec_reading *out);

#endif
