/*
 * tracelog/schema.h - typed event payloads: the schema of an event type
 * describes the C struct its payload holds, so analyzers read named,
 * typed fields instead of bytes (format-spec/ptl-format.md section 5.6).
 *
 * A schema is text such as
 *
 *     u32 len; u16 port; char[16] iface; f64 latency; enum8 state {IDLE=0, BUSY=1}
 *
 * Each field is laid out as a C compiler lays out the same struct on
 * x86-64 and aarch64 Linux (each scalar aligned to its size, the struct size
 * a multiple of its largest alignment), so a program records
 * `posix_trace_event(id, &s, sizeof s)` and the schema says how to read it.
 * Types: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 bool ptr, char[N] (text up to
 * the first NUL), bytes[N], eventset[N] (N 64-bit words of a
 * trace_event_set_t bitmap), enum8/enum16/enum32 NAME {A=0, B=1} (named
 * values), flags8/flags16/flags32 NAME {READ=0x1, WRITE=0x2} (named bits),
 * and, as the last field only, char[] or bytes[] (the rest of the payload).
 * Values are little-endian, as on those hosts.
 *
 * Parsing is strict and bounded (the limits below); an error names the byte
 * position in the text. tracelog_schema_text() gives the canonical form,
 * which parses to the same layout and is what logs store.
 *
 * Decoding never trusts the payload: tracelog_fields_decode() reads as far
 * as the payload goes and says when its size differs from the schema's.
 * Nothing is allocated while decoding; all values are read from the
 * caller's payload bytes.
 *
 * Thread safety: a parsed tracelog_schema is immutable. Any number of
 * threads may use one schema (and decode with it) at the same time; free it
 * once, when no thread uses it any more. Parsing touches no global state.
 * A tracelog_fields view is a plain value owned by the caller.
 *
 * Errors: functions return tracelog_status. TRACELOG_E_INVAL: a NULL
 * argument, an index out of range, a conversion the field's type does not
 * have, or (parse) a syntax error; TRACELOG_E_LIMIT: a limit exceeded (parse)
 * or a value out of the requested type's range; TRACELOG_E_TRUNCATED: the
 * payload ends before the field; TRACELOG_E_NOMEM: out of memory.
 */
#ifndef TRACELOG_SCHEMA_H
#define TRACELOG_SCHEMA_H

#include "tracelog/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracelog_schema tracelog_schema;

/* Limits of the schema language (format-spec section 5.6.4). */
#define TRACELOG_SCHEMA_TEXT_MAX 65536    /* bytes of schema text */
#define TRACELOG_SCHEMA_FIELDS_MAX 256    /* fields in a schema */
#define TRACELOG_SCHEMA_NAME_MAX 63       /* bytes of a field or value name */
#define TRACELOG_SCHEMA_ITEMS_MAX 256     /* named values of one enum or flags field */
#define TRACELOG_SCHEMA_ALL_ITEMS_MAX 512 /* named values in a whole schema */
#define TRACELOG_SCHEMA_SIZE_MAX 1048576  /* payload bytes the fixed fields span, padding included */

/* tracelog_schema_find()'s answer for a name that is not a field. */
#define TRACELOG_SCHEMA_NO_FIELD ((size_t)-1)

/* Field types. Values are pinned. */
typedef enum tracelog_field_type {
    TRACELOG_FIELD_U8 = 1,
    TRACELOG_FIELD_U16 = 2,
    TRACELOG_FIELD_U32 = 3,
    TRACELOG_FIELD_U64 = 4,
    TRACELOG_FIELD_I8 = 5,
    TRACELOG_FIELD_I16 = 6,
    TRACELOG_FIELD_I32 = 7,
    TRACELOG_FIELD_I64 = 8,
    TRACELOG_FIELD_F32 = 9,
    TRACELOG_FIELD_F64 = 10,
    TRACELOG_FIELD_BOOL = 11,
    TRACELOG_FIELD_PTR = 12,      /* an address, 8 bytes; shown in hex */
    TRACELOG_FIELD_CHAR = 13,     /* char[N] or char[]: text up to the first NUL */
    TRACELOG_FIELD_BYTES = 14,    /* bytes[N] or bytes[] */
    TRACELOG_FIELD_ENUM = 15,     /* enum8/16/32: an unsigned integer with named values */
    TRACELOG_FIELD_FLAGS = 16,    /* flags8/16/32: an unsigned integer with named bits */
    TRACELOG_FIELD_EVENTSET = 17  /* eventset[N]: bit i set = event id i is in the set */
} tracelog_field_type;

/* The schema keyword of a type ("u8", "char", "enum", ...); NULL for an unknown value. */
TRACELOG_API const char *tracelog_field_type_name(tracelog_field_type type);

/*
 * Parses a NUL-terminated schema. On success *out owns a new schema (free it
 * with tracelog_schema_free). On failure *out is NULL and err (if not NULL)
 * says what and where: err->offset is the byte position in text, and
 * err->message repeats it ("schema byte 12: unknown type 'u33'").
 * Errors: TRACELOG_E_INVAL (NULL argument, syntax, a repeated name, a
 * variable-length field that is not last), TRACELOG_E_LIMIT (a limit above),
 * TRACELOG_E_NOMEM.
 */
TRACELOG_API tracelog_status tracelog_schema_parse(const char *text, tracelog_schema **out,
                                                   tracelog_error *err);

/* Frees s. NULL is a no-op. */
TRACELOG_API void tracelog_schema_free(tracelog_schema *s);

/*
 * The canonical text of s: fields separated by "; ", one space between type
 * and name, enum values in decimal, flag values in hex ("0x1"), items as
 * "{A=0, B=1}". Borrowed: valid until tracelog_schema_free.
 */
TRACELOG_API const char *tracelog_schema_text(const tracelog_schema *s);

/* Number of fields (0 for the empty schema, which describes an empty payload). */
TRACELOG_API size_t tracelog_schema_field_count(const tracelog_schema *s);

/*
 * Payload size the schema describes: the C sizeof of the struct (fixed
 * fields with their padding) when every field has a fixed size; with a
 * trailing char[] or bytes[], the offset of that field, the least a payload
 * holds (tracelog_schema_is_variable() says which).
 */
TRACELOG_API uint32_t tracelog_schema_size(const tracelog_schema *s);
TRACELOG_API int tracelog_schema_is_variable(const tracelog_schema *s);

/* One field as the schema lays it out. */
typedef struct tracelog_field_info {
    const char *name;         /* borrowed: valid until tracelog_schema_free */
    tracelog_field_type type;
    uint32_t offset;          /* bytes from the start of the payload */
    uint32_t size;            /* bytes; 0 for a variable-length field */
    uint32_t count;           /* N of char[N], bytes[N], eventset[N]; 0 for other types */
    uint32_t item_count;      /* named values of an enum or flags field; 0 for other types */
    int variable;             /* 1 for the trailing char[] or bytes[] */
} tracelog_field_info;

/* Describes field index (0 .. field_count - 1). TRACELOG_E_INVAL past the end. */
TRACELOG_API tracelog_status tracelog_schema_field(const tracelog_schema *s, size_t index,
                                                   tracelog_field_info *out);

/* Index of the field called name, or TRACELOG_SCHEMA_NO_FIELD. */
TRACELOG_API size_t tracelog_schema_find(const tracelog_schema *s, const char *name);

/*
 * Named value `item` (0 .. item_count - 1, in the order the schema lists
 * them) of an enum or flags field: its name (borrowed, valid until
 * tracelog_schema_free) and value. TRACELOG_E_INVAL for a bad index.
 */
TRACELOG_API tracelog_status tracelog_schema_item(const tracelog_schema *s, size_t field,
                                                  size_t item, const char **name,
                                                  uint64_t *value);

/*
 * Name of `value` in enum field `field` (the first item with that value), or
 * NULL if the value has no name or the field is not an enum. Borrowed.
 */
TRACELOG_API const char *tracelog_schema_enum_name(const tracelog_schema *s, size_t field,
                                                   uint64_t value);

/*
 * A payload seen through a schema: a plain value that borrows both the
 * schema and the payload bytes (keep both alive while using it). Filled by
 * tracelog_fields_decode; read the fields with the functions below.
 */
typedef struct tracelog_fields {
    const tracelog_schema *schema;
    const uint8_t *data;  /* the payload */
    size_t len;           /* its length */
    size_t present;       /* fields 0 .. present - 1 lie wholly inside the payload */
    int size_check;       /* 0: the size the schema describes; < 0: shorter; > 0: longer */
} tracelog_fields;

/*
 * Looks at payload[0..len) through s. Fields are decoded as far as the
 * payload goes: a field that does not lie wholly inside it is absent. A
 * payload longer than a fixed-size schema keeps its extra bytes unread.
 * Returns TRACELOG_OK when the size is the schema's (at least the schema's
 * size when it is variable), TRACELOG_E_TRUNCATED when the payload is
 * shorter, TRACELOG_E_CORRUPT when it is longer; *out is filled in all
 * three cases. TRACELOG_E_INVAL for a NULL s or out, or a NULL payload with
 * len > 0.
 */
TRACELOG_API tracelog_status tracelog_fields_decode(const tracelog_schema *s, const void *payload,
                                                    size_t len, tracelog_fields *out);

/*
 * Field `index` as a signed integer: integer, bool, ptr, enum and flags
 * fields. TRACELOG_E_LIMIT for an unsigned value above INT64_MAX.
 */
TRACELOG_API tracelog_status tracelog_fields_int(const tracelog_fields *f, size_t index,
                                                 int64_t *out);
/* As unsigned: the same types; TRACELOG_E_LIMIT for a negative value. */
TRACELOG_API tracelog_status tracelog_fields_uint(const tracelog_fields *f, size_t index,
                                                  uint64_t *out);
/* As a double: every numeric type (integers above 2^53 are rounded). */
TRACELOG_API tracelog_status tracelog_fields_double(const tracelog_fields *f, size_t index,
                                                    double *out);
/*
 * A char field's text: *text points into the payload, *len bytes up to the
 * first NUL (or the whole field if it holds none). NOT NUL-terminated, and
 * not checked to be UTF-8.
 */
TRACELOG_API tracelog_status tracelog_fields_string(const tracelog_fields *f, size_t index,
                                                    const char **text, size_t *len);
/* Any field's raw bytes (a variable field: the rest of the payload). Points into the payload. */
TRACELOG_API tracelog_status tracelog_fields_bytes(const tracelog_fields *f, size_t index,
                                                   const uint8_t **bytes, size_t *len);

/*
 * Field `index` as text, into buf[0..cap) (always NUL-terminated when
 * cap > 0, cut to fit); *len (if not NULL) gets the full length, as
 * snprintf returns it. Integers in decimal; f32/f64 in the shortest form
 * that reads back to the same value ("nan", "inf", "-inf"); bool "true" /
 * "false"; ptr "0x..." in hex; enum: the value's name, or the number;
 * flags: the names of the bits set joined by "|", bits without a name as
 * one hex number, "0" when no bit is set; char: the text, raw (not escaped:
 * escape it before showing it on a terminal); bytes: lowercase hex;
 * eventset: the member ids as ranges, "[1-8, 32, 40-41]".
 * Errors as the getters (TRACELOG_E_TRUNCATED for an absent field).
 */
TRACELOG_API tracelog_status tracelog_fields_format(const tracelog_fields *f, size_t index,
                                                    char *buf, size_t cap, size_t *len);

/*
 * The text tracelog_fields_format gives an f64 (f32) field, for a caller
 * that reads the value itself: the shortest that reads back to the same
 * bits, laid out as %g ("0.000231", "8e-06", "1500", "1e+15", "5e-324",
 * "-0", "nan", "inf", "-inf"). Writes it into out, which must have room for
 * TRACELOG_DOUBLE_TEXT_MAX bytes (digits are copied in blocks that may
 * pass the text's end), without a NUL, and returns its length (at most 24).
 * Pure: thread-safe, no allocation.
 */
#define TRACELOG_DOUBLE_TEXT_MAX 48
TRACELOG_API size_t tracelog_double_text(double v, char *out);
TRACELOG_API size_t tracelog_float_text(float v, char *out);

#ifdef __cplusplus
}
#endif
#endif
