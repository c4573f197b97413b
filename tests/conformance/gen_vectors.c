/*
 * gen_vectors: writes the conformance vectors of format-spec/vectors/ (see
 * its README.md), or with --check compares the committed ones with what it
 * would write. Deterministic: fixed salts, no clock, no randomness.
 *
 *   gen_vectors [--check] DIR
 *
 * Each vector is a .ptl file and the reading the specification requires of
 * it. The sections below follow the specification's: header (3.3), framing
 * and damage (4, 8.2-8.4), CBOR profile (5.1), METADATA (5.2), EVENT_TYPES
 * (5.3), STATUS (5.4), TRAILER (5.5, 8.6), chunks (6), rings (2.2, 8.5),
 * reader limits (9.1).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "zstd_frame.h"

static tracelog_event E[3];
static const uint32_t IDS[2] = {1, 2};
static const char *const NAMES[2] = {"start", "tick"};
static const tracelog_log_status ST3 = {3, 3, 0, 0, 0, 0, 0, 0};

#define AT_SEQ(s) (&(bopt){.has_seq = 1, .seq = (s)})

/* The log of the spec's worked example, from the block after METADATA on. */
static void example_tail(void)
{
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
}

static void example_log(void)
{
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    example_tail();
}

/* ---- 3.3 header ----------------------------------------------------------------------- */

static void header_only(const char *name, const char *about, const hopt *h, size_t keep, const char *cond)
{
    vec_begin(name, about);
    vec_header(h);
    if (keep != (size_t)-1)
        V.file.len = keep;
    else {
        w_meta(&META_STD, &(bopt){.no_apply = 1});
        example_tail();
    }
    expect_open(cond);
    vec_end();
}

static void header_vectors(void)
{
    const size_t whole = (size_t)-1;
    header_only("hdr-empty", "an empty file: a log whose creation was cut short (3.3 check 1)", NULL, 0,
                "TRUNCATED_HEADER");
    header_only("hdr-magic-prefix-1", "one byte, the first of the magic (check 1)", NULL, 1, "TRUNCATED_HEADER");
    header_only("hdr-magic-prefix-7", "seven bytes, a prefix of the magic (check 1)", NULL, 7, "TRUNCATED_HEADER");
    header_only("hdr-short-not-magic", "four bytes that are not a prefix of the magic (check 1)",
                &(hopt){.magic = "\x8BPTX\r\n\x1A\n"}, 4, "BAD_MAGIC");
    header_only("hdr-magic-7bit", "the magic with bit 7 of its first byte stripped (check 1)",
                &(hopt){.magic = "\x0BPTL\r\n\x1A\n"}, whole, "BAD_MAGIC");
    header_only("hdr-magic-crlf", "the magic after a CRLF-to-LF conversion (check 1)",
                &(hopt){.magic = "\x8BPTL\n\x1A\n\x01"}, whole, "BAD_MAGIC");
    header_only("hdr-short-12", "the magic and 4 more bytes (check 2)", NULL, 12, "TRUNCATED_HEADER");
    header_only("hdr-short-40", "40 bytes of a 64-byte header (check 5)", NULL, 40, "TRUNCATED_HEADER");
    header_only("hdr-major-2", "major 2, and a header checksum that fails: the major is checked first (check 3)",
                &(hopt){.has_major = 1, .major = 2, .bad_crc = 1}, whole, "UNSUPPORTED_MAJOR");
    header_only("hdr-major-0", "major 0 (check 3)", &(hopt){.has_major = 1, .major = 0}, whole,
                "UNSUPPORTED_MAJOR");
    header_only("hdr-size-60", "header_size 60, below 64, and a bad checksum: the size is checked first (check 4)",
                &(hopt){.header_size = 60, .bad_crc = 1}, whole, "BAD_HEADER_SIZE");
    header_only("hdr-size-68", "header_size 68, not a multiple of 8 (check 4)", &(hopt){.header_size = 68}, whole,
                "BAD_HEADER_SIZE");
    header_only("hdr-size-4104", "header_size 4104, above 4096 (check 4)", &(hopt){.header_size = 4104}, whole,
                "BAD_HEADER_SIZE");
    header_only("hdr-size-128-short", "header_size 128 in a 100-byte file (check 5)", &(hopt){.header_size = 128},
                100, "TRUNCATED_HEADER");
    header_only("hdr-crc", "a header checksum that fails (check 6)", &(hopt){.bad_crc = 1}, whole,
                "HEADER_CRC_MISMATCH");
    header_only("hdr-incompat-bad-crc", "an unknown incompatible flag and a bad checksum: the checksum is checked "
                "first (check 6 before 7)", &(hopt){.incompat = 2, .bad_crc = 1}, whole, "HEADER_CRC_MISMATCH");
    header_only("hdr-incompat", "an unknown incompatible flag (check 7)", &(hopt){.incompat = 0x80000000u}, whole,
                "UNSUPPORTED_FEATURE");
    header_only("hdr-seq-ring-fields", "a sequential header with segment_size set (check 8)",
                &(hopt){.segment_size = 4096}, whole, "BAD_GEOMETRY");
    header_only("hdr-ring-segment-4000", "a ring with segments of 4000 bytes, below 4096 (check 8)",
                &(hopt){.layout = 1, .segment_size = 4000, .segment_count = 2, .ring_offset = 4160}, whole,
                "BAD_GEOMETRY");
    header_only("hdr-ring-segment-unaligned", "a ring with segments of 4100 bytes, not a multiple of 8 (check 8)",
                &(hopt){.layout = 1, .segment_size = 4100, .segment_count = 2, .ring_offset = 4160}, whole,
                "BAD_GEOMETRY");
    header_only("hdr-ring-one-segment", "a ring of one segment (check 8)",
                &(hopt){.layout = 1, .segment_size = 4096, .segment_count = 1, .ring_offset = 4160}, whole,
                "BAD_GEOMETRY");
    header_only("hdr-ring-offset-low", "ring_offset 56, inside the header (check 8)",
                &(hopt){.layout = 1, .segment_size = 4096, .segment_count = 2, .ring_offset = 56}, whole,
                "BAD_GEOMETRY");
    header_only("hdr-ring-offset-unaligned", "ring_offset 4164, not a multiple of 8 (check 8)",
                &(hopt){.layout = 1, .segment_size = 4096, .segment_count = 2, .ring_offset = 4164}, whole,
                "BAD_GEOMETRY");
    header_only("hdr-ring-offset-huge", "ring_offset 2^48 + 8 (check 8)",
                &(hopt){.layout = 1, .segment_size = 4096, .segment_count = 2, .ring_offset = (1ull << 48) + 8},
                whole, "BAD_GEOMETRY");
    header_only("hdr-layout-2", "layout 2 (check 9)", &(hopt){.layout = 2}, whole, "UNKNOWN_LAYOUT");
    header_only("hdr-layout-2-fields", "layout 2 with ring fields set: check 8 only constrains layouts 0 and 1",
                &(hopt){.layout = 2, .segment_size = 1, .segment_count = 1, .ring_offset = 8}, whole,
                "UNKNOWN_LAYOUT");

    vec_begin("hdr-later-minor", "minor 7, a compatible flag, a 72-byte header with unknown fields, non-zero "
              "reserved bytes and a created_ns other than METADATA's: all read (3.1, 3.4)");
    vec_header(&(hopt){.has_minor = 1, .minor = 7, .compat = 1, .header_size = 72, .reserved41 = 0x5A,
                       .created_ns = 12345});
    w_meta(&META_STD, NULL);
    example_tail();
    vec_end();
}

/* ---- 4, 8.2-8.4 framing, damage, torn tails --------------------------------------------- */

static void valid_vectors(void)
{
    vec_begin("valid-example", "the worked example of section 13, byte for byte (its salt)");
    vec_header(&(hopt){.salt = 0x1FA00B526AD415E9ull});
    w_meta(&META_STD, NULL);
    example_tail();
    if (V.file.len != 1000 || memcmp(V.file.p + 0x3C, "\x98\xa3\xcc\x5e", 4) ||
        memcmp(V.file.p + 0x21C, "\xa1\x03\x9d\x6a", 4) || memcmp(V.file.p + 0x314, "\x90\x87\x7c\x84", 4)) {
        fprintf(stderr, "gen_vectors: valid-example differs from the bytes of spec section 13\n");
        exit(2);
    }
    vec_end();

    vec_begin("valid-minimal", "a header, METADATA and TRAILER: no event, no type, clean");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_trailer(&(tracelog_log_status){0}, NULL, NULL);
    vec_end();

    vec_begin("valid-header-only", "a header alone: no METADATA (NO_METADATA), not closed");
    vec_header(NULL);
    vec_end();

    vec_begin("valid-not-closed", "the example without its TRAILER, cut at a block boundary: no problem, not "
              "clean (8.4)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    vec_end();

    vec_begin("valid-zstd", "the example with its chunk as a zstd frame (codec 1, 6.2)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    chunk c;
    chunk_events(&c, E, 3);
    c.codec = 1;
    w_chunk(&c, E, -1, NULL);
    c.zstd_checksum = 1;
    w_chunk(&c, E, -1, NULL);
    chunk_free(&c);
    w_status(&(tracelog_log_status){6, 6, 0, 0, 0, 0, 0, 0}, NULL);
    w_trailer(&(tracelog_log_status){6, 6, 0, 0, 0, 0, 0, 0}, NULL, NULL);
    vec_end();

    vec_begin("valid-several-chunks", "three chunks with STATUS blocks between them; each chunk starts from the "
              "initial state (6.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    w_events(E + 1, 2, NULL);
    w_events(E, 1, NULL);
    w_status(&(tracelog_log_status){6, 6, 0, 0, 0, 0, 0, 0}, NULL);
    w_trailer(&(tracelog_log_status){6, 6, 0, 0, 0, 0, 0, 0}, NULL, NULL);
    vec_end();

    vec_begin("valid-checkpoint", "a TRAILER written at a checkpoint, more blocks, then a final TRAILER: clean "
              "(8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_trailer(&ST3, NULL, NULL);
    w_events(E, 2, NULL);
    w_trailer(&(tracelog_log_status){5, 5, 0, 0, 0, 0, 0, 0}, NULL, NULL);
    vec_end();

    vec_begin("valid-checkpoint-not-closed", "a checkpoint TRAILER followed by a CHUNK: not clean (8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_trailer(&ST3, NULL, NULL);
    w_events(E, 2, NULL);
    vec_end();

    static const uint8_t junk[24] = "unknown block payload!!";
    vec_begin("valid-unknown-block-types", "blocks of types 0, 8 and 65535 between the others: skipped by length, "
              "counted in the sequence (4.5)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_block(0, junk, 5, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_block(8, junk, 24, NULL);
    w_events(E, 3, NULL);
    w_block(65535, junk, 0, NULL);
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    vec_end();

    vec_begin("valid-unknown-block-after-trailer", "a block of unknown type after the TRAILER: not clean (8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    example_tail();
    w_block(9, junk, 8, NULL);
    vec_end();

    bopt odd = {.flags = 0xFFFF, .reserved = 0xFFFFFFFFu, .pad_byte = 0xAA};
    vec_begin("valid-flags-reserved-padding", "every block with flags 0xFFFF, reserved 0xFFFFFFFF and padding "
              "bytes 0xAA: all ignored (4.1)");
    vec_header(NULL);
    w_meta(&META_STD, &odd);
    w_types(IDS, NAMES, 2, &odd);
    w_events(E, 3, &odd);
    w_status(&ST3, &odd);
    w_trailer(&ST3, NULL, &odd);
    vec_end();

    vec_begin("valid-padding", "PADDING blocks in a sequential log, one with a payload, one after the TRAILER: "
              "skipped, still clean (4.5, 8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_block(6, NULL, 0, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_block(6, junk, 16, NULL);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    w_block(6, NULL, 0, NULL);
    vec_end();

    vec_begin("valid-seq-from-100", "blocks numbered from 100: the first seq need not be 0 (8.4)");
    vec_header(NULL);
    V.next_seq = 100;
    w_meta(&META_STD, NULL);
    example_tail();
    vec_end();
}

static void damage_vectors(void)
{
    vec_begin("damage-block-header-crc", "the EVENT_TYPES block's header checksum fails: its span is skipped "
              "(BLOCK_HEADER_CRC_MISMATCH), the next block breaks the sequence, no names (8.4)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    uint64_t t = w_types(IDS, NAMES, 2, &(bopt){.bad_header_crc = 1});
    uint64_t c = w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    expect_problem("BLOCK_HEADER_CRC_MISMATCH", t, c - t);
    expect_problem("SEQUENCE_BREAK", c, 0);
    vec_end();

    vec_begin("damage-junk", "16 bytes that are no block between two blocks: BLOCK_HEADER_MISSING, no sequence "
              "break (8.4)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    uint64_t j = V.file.len;
    b_fill(&V.file, 0x55, 16);
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    expect_problem("BLOCK_HEADER_MISSING", j, 16);
    vec_end();

    vec_begin("damage-zeros", "32 zero bytes between two blocks of a sequential log: damage, not free space "
              "(8.4)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    j = V.file.len;
    b_fill(&V.file, 0, 32);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    expect_problem("BLOCK_HEADER_MISSING", j, 32);
    vec_end();

    vec_begin("damage-chunk-payload-crc", "a CHUNK whose payload checksum fails: its events are lost; the TRAILER "
              "is intact, yet the log is not clean (6.7, 8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    c = w_events(E, 3, &(bopt){.bad_payload_crc = 1});
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    expect_problem("PAYLOAD_CRC_MISMATCH", c, 120);
    vec_end();

    vec_begin("damage-metadata-payload-crc", "METADATA's payload checksum fails: attributes take their defaults "
              "(5.2)");
    vec_header(NULL);
    uint64_t m = w_meta(&META_STD, &(bopt){.bad_payload_crc = 1});
    example_tail();
    expect_problem("PAYLOAD_CRC_MISMATCH", m, 392);
    vec_end();

    vec_begin("damage-types-payload-crc", "the EVENT_TYPES block is lost, the TRAILER still names the types "
              "(5.3)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    t = w_types(IDS, NAMES, 2, &(bopt){.bad_payload_crc = 1});
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    for (int i = 0; i < 2; i++)
        vec_set_type(&V.want, IDS[i], NAMES[i], strlen(NAMES[i]), NULL);
    V.defined[0].id = 1, V.defined[0].name = "start";
    V.defined[1].id = 2, V.defined[1].name = "tick";
    V.ndefined = 2;
    w_trailer(&ST3, NULL, NULL);
    expect_problem("PAYLOAD_CRC_MISMATCH", t, 64);
    vec_end();

    vec_begin("damage-status-payload-crc", "a STATUS block is lost: the status is the newest valid one (8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&(tracelog_log_status){1, 1, 0, 0, 0, 0, 0, 0}, NULL);
    uint64_t s = w_status(&ST3, &(bopt){.bad_payload_crc = 1});
    expect_problem("PAYLOAD_CRC_MISMATCH", s, 120);
    vec_end();

    vec_begin("damage-missing-block", "block seq 3 is missing: SEQUENCE_BREAK at the block after the gap (8.4)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    uint64_t st = w_status(&ST3, AT_SEQ(4));
    w_trailer(&ST3, NULL, NULL);
    expect_problem("SEQUENCE_BREAK", st, 0);
    vec_end();

    vec_begin("damage-repeated-chunk", "a CHUNK block repeated with the same seq: SEQUENCE_BREAK, and its events "
              "are delivered twice (8.4)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, AT_SEQ(2));
    c = w_events(E, 3, AT_SEQ(2));
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    expect_problem("SEQUENCE_BREAK", c, 0);
    vec_end();

    vec_begin("damage-status-seq-above-trailer", "a STATUS block numbered above the TRAILER after it: the final "
              "status is the one with the highest seq, not the TRAILER's (8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    s = w_status(&(tracelog_log_status){9, 9, 0, 0, 0, 0, 0, 0}, AT_SEQ(10));
    uint64_t tr = w_trailer(&ST3, NULL, AT_SEQ(4));
    expect_problem("SEQUENCE_BREAK", s, 0);
    expect_problem("SEQUENCE_BREAK", tr, 0);
    vec_end();
}

static void torn_vectors(void)
{
    static const size_t cut[] = {3, 10, 100};
    static const char *const names[] = {"torn-tail-3", "torn-tail-header", "torn-tail-payload"};
    static const char *const about[] = {
        "the file ends 3 bytes into the TRAILER's block header: TORN_TAIL, not clean (8.4)",
        "the file ends 10 bytes into the TRAILER's block header (8.4)",
        "the file ends 100 bytes into the TRAILER's payload (8.4)",
    };
    for (int i = 0; i < 3; i++) {
        vec_begin(names[i], about[i]);
        vec_header(NULL);
        w_meta(&META_STD, NULL);
        w_types(IDS, NAMES, 2, NULL);
        w_events(E, 3, NULL);
        w_status(&ST3, NULL);
        uint64_t t = w_trailer(&ST3, NULL, &(bopt){.no_apply = 1});
        V.file.len = t + cut[i];
        V.closed = 0;
        expect_problem("TORN_TAIL", t, cut[i]);
        vec_end();
    }

    vec_begin("torn-tail-zeros", "a closed log followed by 4096 zero bytes (a file grown by a crash): TORN_TAIL, "
              "not clean (8.4)");
    example_log();
    uint64_t end = V.file.len;
    b_fill(&V.file, 0, 4096);
    expect_problem("TORN_TAIL", end, 4096);
    vec_end();

    vec_begin("torn-tail-junk", "8 bytes after the TRAILER: TORN_TAIL, not clean (8.4, 8.6)");
    example_log();
    end = V.file.len;
    b_fill(&V.file, 0x33, 8);
    expect_problem("TORN_TAIL", end, 8);
    vec_end();

    vec_begin("torn-tail-long-block", "a CHUNK whose valid header claims a payload reaching past the end of the "
              "file: its length is trusted, so the rest of the file is the torn tail (8.2)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    uint64_t c = w_events(E, 3, &(bopt){.has_len = 1, .len = 4096, .no_apply = 1});
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, &(bopt){.no_apply = 1});
    V.have_status = 0, V.want.status = (tracelog_log_status){0};
    V.closed = 0;
    expect_problem("TORN_TAIL", c, V.file.len - c);
    vec_end();
}

/* ---- 5.1 CBOR profile, 5.2 METADATA ------------------------------------------------------------ */

/* A log whose METADATA payload is cbor; `valid`: METADATA is m, otherwise BAD_METADATA. */
static void meta_vector(const char *name, const char *about, const bytes *cbor, const tracelog_metadata *m)
{
    vec_begin(name, about);
    vec_header(NULL);
    uint64_t off = w_meta_cbor(cbor, m ? NULL : &(bopt){.no_apply = 1});
    if (m)
        V.want.meta = *m;
    else
        expect_problem("BAD_METADATA", off, 0);
    example_tail();
    vec_end();
}

/* The standard METADATA plus one unknown key holding the item `hex`. */
static void unknown_value(const char *name, const char *about, const char *hex, int valid)
{
    bytes b = {0};
    cb_map(&b, 15);
    meta_pairs(&b, &META_STD);
    cb_text(&b, "future");
    cb_raw(&b, hex);
    meta_vector(name, about, &b, valid ? &META_STD : NULL);
    b_free(&b);
}

/* The standard METADATA with one more pair, key and value given as hex. */
static void extra_pair(const char *name, const char *about, const char *hex, const tracelog_metadata *m)
{
    bytes b = {0};
    cb_map(&b, 15);
    meta_pairs(&b, &META_STD);
    cb_raw(&b, hex);
    meta_vector(name, about, &b, m);
    b_free(&b);
}

static void cbor_vectors(void)
{
    unknown_value("cbor-tags-one-byte", "tags 0 to 23 in their one-byte heads (C0-D7; libcbor 0.8 refuses "
                  "C6-D4) under an unknown key: skipped (5.1)",
                  "98 19 C0 00 C1 00 C2 40 C3 40 C4 80 C5 80 C6 00 C7 00 C8 00 C9 00 CA 00 CB 00 CC 00 CD 00 CE 00 "
                  "CF 00 D0 00 D1 00 D2 00 D3 00 D4 00 D5 00 D6 00 D7 00 D8 06 00",
                  1);
    unknown_value("cbor-tags-wide", "tags with 1-, 2-, 4- and 8-byte arguments: skipped (5.1)",
                  "84 D8 FF 00 D9 FF FF 00 DA 00 01 00 00 00 DB 00 00 00 01 00 00 00 00 00", 1);
    unknown_value("cbor-simple-values", "every simple value (E0-F3, false, true, null, undefined, F8 20-F8 FF) "
                  "under an unknown key: skipped (5.1)",
                  "98 1A E0 E1 E2 E3 E4 E5 E6 E7 E8 E9 EA EB EC ED EE EF F0 F1 F2 F3 F4 F5 F6 F7 F8 20 F8 FF", 1);
    unknown_value("cbor-floats", "half, single and double floats under an unknown key: skipped (5.1)",
                  "83 F9 3C 00 FA 47 C3 50 00 FB 3F F1 99 99 99 99 99 9A", 1);
    unknown_value("cbor-other-types", "negative integers, byte strings and a map with integer keys under an "
                  "unknown key: skipped (5.1)",
                  "84 20 3B FF FF FF FF FF FF FF FF 43 01 02 03 A2 01 02 20 80", 1);
    /* METADATA map at depth 1, "future"'s value at depth 2: 30 nested arrays put an empty array at depth 32. */
    char deep[256] = "", deeper[256] = "", tagged[256] = "";
    for (int i = 0; i < 30; i++)
        strcat(deep, "81 ");
    strcat(deep, "80");
    for (int i = 0; i < 31; i++)
        strcat(deeper, "81 ");
    strcat(deeper, "00");
    for (int i = 0; i < 15; i++)
        strcat(tagged, "81 C1 ");
    strcat(tagged, "C1 00");
    unknown_value("cbor-depth-32", "an empty array at depth 32, the deepest the profile allows (5.1)", deep, 1);
    unknown_value("cbor-depth-33", "an integer at depth 33: METADATA invalid (5.1)", deeper, 0);
    unknown_value("cbor-depth-33-tags", "arrays and tags alternating down to depth 33: tags count as a level, "
                  "METADATA invalid (5.1)", tagged, 0);
    unknown_value("cbor-indefinite-map", "an indefinite-length map (BF ... FF): outside the profile (5.1)",
                  "BF 61 61 00 FF", 0);
    unknown_value("cbor-indefinite-text", "an indefinite-length text (7F ... FF): outside the profile (5.1)",
                  "7F 61 61 FF", 0);
    unknown_value("cbor-break", "a break (FF) outside an indefinite-length item (5.1)", "FF", 0);
    unknown_value("cbor-ai-28", "additional information 28: not well-formed (5.1)", "1C", 0);
    unknown_value("cbor-ai-31-uint", "additional information 31 in major type 0: not well-formed (5.1)", "1F", 0);
    unknown_value("cbor-simple-f8-1f", "F8 1F, a two-byte head for a one-byte simple value: not well-formed "
                  "(5.1)", "F8 1F", 0);
    unknown_value("cbor-short-text", "a text whose length runs past the payload (5.1)", "78 64 61 62 63", 0);
    unknown_value("cbor-lying-count", "an array of 2^32 items in a few bytes (5.1)", "9B 00 00 00 01 00 00 00 00 00", 0);

    bytes b = {0};
    meta_pairs(&b, &META_STD);
    bytes w = {0};
    cb_raw(&w, "BB 00 00 00 00 00 00 00 0E"); /* the map head, with an 8-byte argument */
    b_put(&w, b.p, b.len);
    b_u8(&w, 0);
    meta_vector("cbor-trailing-byte", "a byte after METADATA's map: invalid (5.1)", &w, NULL);
    w.len = w.len - 1;
    meta_vector("cbor-long-heads", "METADATA's map head with an 8-byte argument: heads need not be shortest "
                "(5.1)", &w, &META_STD);
    b_free(&w);
    b_free(&b);
}

static void metadata_vectors(void)
{
    bytes b = {0};
    cb_map(&b, 0);
    tracelog_metadata d = {.stream_full_policy = TRACELOG_POLICY_LOOP, .log_full_policy = TRACELOG_POLICY_APPEND};
    meta_vector("meta-empty-map", "an empty METADATA map: every attribute takes its default (5.2)", &b, &d);

    tracelog_metadata m = META_STD;
    strcpy(m.trace_name, "second");
    extra_pair("meta-repeated-key", "trace_name twice: the last value wins (5.1)",
               "6A 74726163655F6E616D65 66 7365636F6E64", &m);
    extra_pair("meta-key-in-wrong-map", "\"pid\" in the top-level map belongs to \"process\": an unknown key "
               "there, skipped, even with a wrong type (5.2)", "63 706964 63 616263", &META_STD);
    b.len = 0;
    cb_map(&b, 3);
    cb_text(&b, "trace_name"), cb_text(&b, "demo");
    cb_text(&b, "host"), cb_map(&b, 3);
    cb_text(&b, "host"), cb_map(&b, 1), cb_text(&b, "hostname"), cb_text(&b, "inner");
    cb_text(&b, "trace_name"), cb_text(&b, "in host");
    cb_text(&b, "os_name"), cb_text(&b, "Linux");
    cb_text(&b, "process"), cb_map(&b, 2);
    cb_text(&b, "machine"), cb_text(&b, "x86_64");
    cb_text(&b, "pid"), cb_uint(&b, 42);
    d = (tracelog_metadata){.trace_name = "demo", .os_name = "Linux", .pid = 42,
                            .stream_full_policy = TRACELOG_POLICY_LOOP, .log_full_policy = TRACELOG_POLICY_APPEND};
    meta_vector("meta-nested-maps", "a \"host\" map inside \"host\", trace_name in \"host\", machine in "
                "\"process\": each an unknown key in that map, skipped (5.2)", &b, &d);

    m = META_STD;
    memcpy(m.program, "\xff\xfe/bin/x", 8);
    b.len = 0;
    cb_map(&b, 14);
    meta_pairs(&b, &m);
    meta_vector("meta-invalid-utf8", "a program path that is not UTF-8: accepted, its bytes delivered unchanged "
                "(5.1)", &b, &m);

    m = META_STD;
    memset(m.trace_name, 'n', 255);
    m.trace_name[255] = 0;
    memset(m.clock_id, 'c', 31);
    m.clock_id[31] = 0;
    memset(m.os_name, 'o', 63);
    m.os_name[63] = 0;
    strcpy(m.generation_version, "quote \" backslash \\ tab \t");
    b.len = 0;
    cb_map(&b, 14);
    meta_pairs(&b, &m);
    meta_vector("meta-text-limits", "texts of exactly their limits (255, 31, 63 bytes) and with characters JSON "
                "escapes: accepted (5.2)", &b, &m);

    m = META_STD;
    m.log_full_policy = TRACELOG_POLICY_LOOP;
    b.len = 0;
    cb_map(&b, 14);
    meta_pairs(&b, &m);
    meta_vector("meta-loop-in-sequential", "log_full_policy \"loop\" in a sequential file (a converted log): "
                "reported as written (5.2)", &b, &m);
    m.log_full_policy = TRACELOG_POLICY_UNTIL_FULL;
    m.log_max_size = 3000;
    m.stream_full_policy = TRACELOG_POLICY_FLUSH;
    m.inherited = 1;
    b.len = 0;
    cb_map(&b, 14);
    meta_pairs(&b, &m);
    meta_vector("meta-until-full", "UNTIL_FULL, FLUSH and inherited (5.2)", &b, &m);

    vec_begin("meta-second-ignored", "a second valid METADATA block: ignored, the first wins (5.2)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    m = META_STD;
    strcpy(m.trace_name, "second");
    w_meta(&m, NULL);
    example_tail();
    vec_end();

    vec_begin("meta-first-invalid", "an invalid METADATA block, then a valid one: the first valid one is used "
              "(5.2)");
    vec_header(NULL);
    b.len = 0;
    cb_map(&b, 1);
    cb_text(&b, "max_data_size"), cb_text(&b, "64");
    uint64_t off = w_meta_cbor(&b, &(bopt){.no_apply = 1});
    expect_problem("BAD_METADATA", off, 0);
    w_meta(&m, NULL);
    example_tail();
    vec_end();

    struct { const char *name, *about, *hex; } bad[] = {
        {"meta-bad-long-text", "a trace_name of 256 bytes (5.2)", NULL},
        {"meta-bad-clock-id", "a clock_id of 32 bytes (5.2)", "68 636C6F636B5F6964 78 20 "
         "3031323334353637383930313233343536373839303132333435363738393031"},
        {"meta-bad-nul", "a NUL inside trace_name (5.2)", "6A 74726163655F6E616D65 63 610062"},
        {"meta-bad-type", "max_data_size as text (5.2)", "6D 6D61785F646174615F73697A65 62 3634"},
        {"meta-bad-stream-policy", "stream_full_policy \"append\" (5.2)",
         "72 73747265616D5F66756C6C5F706F6C696379 66 617070656E64"},
        {"meta-bad-log-policy", "log_full_policy \"flush\" (5.2)", "6F 6C6F675F66756C6C5F706F6C696379 65 666C757368"},
        {"meta-bad-inheritance", "inheritance \"maybe\" (5.2)", "6B 696E6865726974616E6365 65 6D61796265"},
        {"meta-bad-pid", "a pid of 2^32 in \"process\" (5.2)", "67 70726F63657373 A1 63 706964 1B 0000000100000000"},
        {"meta-bad-host", "\"host\" as text (5.2)", "64 686F7374 61 78"},
        {"meta-bad-key", "an integer key in METADATA's map (5.1)", "01 02"},
        {"meta-bad-negint", "a negative max_data_size (5.1)", "6D 6D61785F646174615F73697A65 20"},
        {"meta-bad-tagged", "a tagged creation_time_ns: a tag is not a uint (5.1)",
         "70 6372656174696F6E5F74696D655F6E73 C1 01"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (bad[i].hex) {
            extra_pair(bad[i].name, bad[i].about, bad[i].hex, NULL);
            continue;
        }
        char name[257];
        memset(name, 'n', 256);
        name[256] = 0;
        b.len = 0;
        cb_map(&b, 1);
        cb_text(&b, "trace_name"), cb_text(&b, name);
        meta_vector(bad[i].name, bad[i].about, &b, NULL);
    }
    b_free(&b);
}

/* ---- 5.3 EVENT_TYPES ----------------------------------------------------------------------------- */

/* A log whose first EVENT_TYPES payload is cbor; valid: its entries are (ids, names). */
static void types_vector(const char *name, const char *about, const bytes *cbor, const uint32_t *ids,
                         const char *const *names, const size_t *lens, size_t n, int valid)
{
    vec_begin(name, about);
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    uint64_t off = w_block(2, cbor->p, cbor->len, NULL);
    if (valid)
        for (size_t i = 0; i < n; i++)
            vec_set_type(&V.want, ids[i], names[i], lens ? lens[i] : strlen(names[i]), NULL);
    else
        expect_problem("BAD_EVENT_TYPES", off, 0);
    w_events(E, 3, NULL);
    w_trailer(&ST3, NULL, NULL);
    vec_end();
}

static void types_vectors(void)
{
    vec_begin("types-redefined", "id 1 named twice in one block and again in a later block: the last "
              "definition names every event of the log, earlier ones included (5.3)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types((uint32_t[]){1, 2, 1}, (const char *const[]){"first", "tick", "second"}, 3, NULL);
    w_events(E, 3, NULL);
    w_types((uint32_t[]){1}, (const char *const[]){"third"}, 1, NULL);
    w_trailer(&ST3, &(topt){.no_types = 1}, NULL);
    vec_end();

    vec_begin("types-in-trailer-only", "no EVENT_TYPES block: the names come from the TRAILER; id 9 has no name "
              "(5.3)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    tracelog_event ev[4];
    std_events(ev);
    ev[3] = ev_make(T0 + 2000, 9, 42, 8, 0x401010, 0, 1, "z");
    w_events(ev, 4, NULL);
    V.defined[0].id = 1, V.defined[0].name = "start";
    V.defined[1].id = 2, V.defined[1].name = "tick";
    V.ndefined = 2;
    vec_set_type(&V.want, 1, "start", 5, NULL);
    vec_set_type(&V.want, 2, "tick", 4, NULL);
    w_trailer(&ST3, NULL, NULL);
    vec_end();

    bytes b = {0};
    char n255[256];
    memset(n255, 'x', 255);
    n255[255] = 0;
    cb_array(&b, 6);
    cb_map(&b, 2), cb_text(&b, "id"), cb_uint(&b, 0), cb_text(&b, "name"), cb_text(&b, "zero");
    cb_map(&b, 2), cb_text(&b, "id"), cb_uint(&b, 4294967295u), cb_text(&b, "name"), cb_text(&b, n255);
    cb_map(&b, 2), cb_text(&b, "id"), cb_uint(&b, 1), cb_text(&b, "name"), cb_textn(&b, "\xc3\x28 bad", 6);
    cb_map(&b, 3), cb_text(&b, "id"), cb_uint(&b, 2), cb_text(&b, "future"), cb_raw(&b, "A1 01 F6"),
        cb_text(&b, "name"), cb_text(&b, "tick\n");
    cb_map(&b, 3), cb_text(&b, "id"), cb_text(&b, "x"), cb_text(&b, "id"), cb_uint(&b, 3), cb_text(&b, "name"),
        cb_text(&b, "three");
    cb_map(&b, 3), cb_text(&b, "id"), cb_uint(&b, 4), cb_text(&b, "name"), cb_uint(&b, 4), cb_text(&b, "name"),
        cb_text(&b, "four");
    types_vector("types-extremes", "ids 0 and 2^32 - 1, a 255-byte name, a name that is not UTF-8, an unknown "
                 "key, a wrong-typed key repeated with a good value: all valid (5.3)", &b,
                 (uint32_t[]){0, 4294967295u, 1, 2, 3, 4},
                 (const char *const[]){"zero", n255, "\xc3\x28 bad", "tick\n", "three", "four"},
                 (size_t[]){4, 255, 6, 5, 5, 4}, 6, 1);

    /* Schemas (5.6): canonical form, an empty schema, and schemas that are ignored while their entries apply. */
    vec_begin("types-schema", "a schema in non-canonical form and an empty one: the reader gives their canonical "
              "form (5.6.3)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    b.len = 0;
    cb_array(&b, 2);
    cb_map(&b, 3), cb_text(&b, "id"), cb_uint(&b, 1), cb_text(&b, "name"), cb_text(&b, "start"), cb_text(&b, "schema"),
        cb_text(&b, "  u32 len ;enum8 st{IDLE = 0,BUSY=0x1,};flags8 m {R=1}");
    cb_map(&b, 3), cb_text(&b, "id"), cb_uint(&b, 2), cb_text(&b, "schema"), cb_text(&b, ""), cb_text(&b, "name"),
        cb_text(&b, "tick");
    w_block(2, b.p, b.len, NULL);
    vec_set_type(&V.want, 1, "start", 5, "u32 len; enum8 st {IDLE=0, BUSY=1}; flags8 m {R=0x1}");
    vec_set_type(&V.want, 2, "tick", 4, "");
    w_events(E, 3, NULL);
    w_trailer(&ST3, &(topt){.no_types = 1}, NULL);
    vec_end();

    char long_name[80] = "u8 ";
    memset(long_name + 3, 'a', 64);
    vec_begin("types-schema-ignored", "a schema that is a map, one with an unknown type, one with a 64-byte field "
              "name: each ignored with BAD_SCHEMA or SCHEMA_TOO_LARGE, the entries' names apply (5.6.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    b.len = 0;
    cb_array(&b, 3);
    cb_map(&b, 3), cb_text(&b, "id"), cb_uint(&b, 1), cb_text(&b, "name"), cb_text(&b, "start"), cb_text(&b, "schema"),
        cb_map(&b, 0);
    cb_map(&b, 3), cb_text(&b, "id"), cb_uint(&b, 2), cb_text(&b, "name"), cb_text(&b, "tick"), cb_text(&b, "schema"),
        cb_text(&b, "u33 x");
    cb_map(&b, 3), cb_text(&b, "id"), cb_uint(&b, 3), cb_text(&b, "name"), cb_text(&b, "three"), cb_text(&b, "schema"),
        cb_text(&b, long_name);
    uint64_t at = w_block(2, b.p, b.len, NULL);
    vec_set_type(&V.want, 1, "start", 5, NULL);
    vec_set_type(&V.want, 2, "tick", 4, NULL);
    vec_set_type(&V.want, 3, "three", 5, NULL);
    expect_problem("BAD_SCHEMA", at, 0);
    expect_problem("BAD_SCHEMA", at, 0);
    expect_problem("SCHEMA_TOO_LARGE", at, 0);
    w_events(E, 3, NULL);
    w_trailer(&ST3, &(topt){.no_types = 1}, NULL);
    vec_end();

    struct { const char *name, *about, *hex; } bad[] = {
        {"types-bad-empty-name", "a valid entry, then one with an empty name: the whole block is ignored (5.3)",
         "82 A2 62 6964 01 64 6E616D65 65 7374617274 A2 62 6964 02 64 6E616D65 60"},
        {"types-bad-id-2-32", "an id of 2^32 (5.3)", "81 A2 62 6964 1B 0000000100000000 64 6E616D65 61 78"},
        {"types-bad-name-256", "a name of 256 bytes (5.3)", NULL},
        {"types-bad-name-nul", "a name holding a NUL (5.3)", "81 A2 62 6964 01 64 6E616D65 63 610062"},
        {"types-bad-no-name", "an entry without a name (5.3)", "81 A1 62 6964 01"},
        {"types-bad-not-array", "a map instead of an array (5.3)", "A0"},
        {"types-bad-entry-not-map", "an entry that is an integer (5.3)", "82 A2 62 6964 01 64 6E616D65 61 61 07"},
        {"types-bad-trailing-byte", "a byte after the array (5.1)", "81 A2 62 6964 01 64 6E616D65 61 61 00"},
        {"types-bad-int-key", "an entry with an integer key (5.1)", "81 A3 62 6964 01 64 6E616D65 61 61 01 02"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        b.len = 0;
        if (bad[i].hex) {
            cb_raw(&b, bad[i].hex);
        } else {
            char n256[257];
            memset(n256, 'y', 256);
            n256[256] = 0;
            cb_array(&b, 1), cb_map(&b, 2), cb_text(&b, "id"), cb_uint(&b, 1), cb_text(&b, "name"),
                cb_text(&b, n256);
        }
        types_vector(bad[i].name, bad[i].about, &b, NULL, NULL, NULL, 0, 0);
    }
    b_free(&b);

    vec_begin("limit-event-types", "a reader limit of 2 distinct ids (limits file): a block of 3 new ids applies "
              "2 (TOO_MANY_EVENT_TYPES); redefining a known id is not refused (5.3, 9.1)");
    V.max_event_types = 2;
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    uint64_t t = w_types((uint32_t[]){1, 2, 3}, (const char *const[]){"start", "tick", "three"}, 3,
                         &(bopt){.no_apply = 1});
    vec_set_type(&V.want, 1, "start", 5, NULL);
    vec_set_type(&V.want, 2, "tick", 4, NULL);
    expect_problem("TOO_MANY_EVENT_TYPES", t, 0);
    w_types((uint32_t[]){2}, (const char *const[]){"tock"}, 1, NULL);
    w_events(E, 3, NULL);
    vec_end();
}

/* ---- 5.4 STATUS, 5.5 TRAILER ----------------------------------------------------------------------- */

static void status_trailer_vectors(void)
{
    bytes b = {0};
    vec_begin("status-missing-and-unknown-keys", "a STATUS with one known key and an unknown one: the others "
              "read as 0 (5.4)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    cb_map(&b, 2), cb_text(&b, "events_written"), cb_uint(&b, 3), cb_text(&b, "future"), cb_raw(&b, "82 F5 20");
    w_block(4, b.p, b.len, NULL);
    V.want.status = (tracelog_log_status){0, 3, 0, 0, 0, 0, 0, 0};
    vec_end();

    struct { const char *name, *about, *hex; } bad[] = {
        {"status-bad-flush-error", "flush_error 2^31 (5.4)", "A1 6B 666C7573685F6572726F72 1A 80000000"},
        {"status-bad-log-full", "log_full as an integer (5.4)", "A1 68 6C6F675F66756C6C 01"},
        {"status-bad-counter", "events_written as text (5.4)", "A1 6E 6576656E74735F7772697474656E 61 33"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        vec_begin(bad[i].name, bad[i].about);
        vec_header(NULL);
        w_meta(&META_STD, NULL);
        w_types(IDS, NAMES, 2, NULL);
        w_events(E, 3, NULL);
        w_status(&(tracelog_log_status){1, 2, 3, 4, 5, 1, 0, 0}, NULL);
        b.len = 0;
        cb_raw(&b, bad[i].hex);
        expect_problem("BAD_STATUS", w_block(4, b.p, b.len, NULL), 0);
        vec_end();
    }

    vec_begin("status-after-trailer", "a STATUS block after the TRAILER: the status is its, and the log is not "
              "clean (8.6)");
    example_log();
    w_status(&(tracelog_log_status){7, 3, 4, 0, 0, 0, 0, 0}, NULL);
    vec_end();

    vec_begin("trailer-no-status", "a TRAILER without \"status\": the status stays that of the STATUS block "
              "before it; clean (5.5)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    w_trailer(&(tracelog_log_status){8, 8, 8, 8, 8, 1, 0, 0}, &(topt){.no_status = 1}, NULL);
    vec_end();

    vec_begin("trailer-no-index", "format 1.1: a TRAILER of a sequential log with index_count 0 after a chunk, as "
              "1.1 writers write it: valid, clean (5.5)");
    vec_header(&(hopt){.has_minor = 1, .minor = 1});
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    w_trailer(&ST3, &(topt){.no_index = 1}, NULL);
    vec_end();

    vec_begin("trailer-no-event-types", "a TRAILER without \"event_types\": valid, clean (5.5)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_trailer(&ST3, &(topt){.no_types = 1}, NULL);
    vec_end();

    b.len = 0;
    cb_text(&b, "future"), cb_raw(&b, "A1 61 61 82 C1 00 F6"); /* 154 bytes of CBOR: 2 pad bytes */
    vec_begin("trailer-extras", "a TRAILER with an unknown key, non-zero pad bytes, and index entries and "
              "trailer_offset that point nowhere: none of them checked (5.5)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_trailer(&ST3, &(topt){.extra_key = &b, .pad_byte = 0x77, .garbage_index = 1}, NULL);
    vec_end();

    struct { const char *name, *about; topt t; } badt[] = {
        {"trailer-bad-bytes-after-map", "a byte after the CBOR map, inside cbor_len: the TRAILER is invalid (5.5)",
         {.junk_after_map = 1}},
        {"trailer-bad-end-magic", "a wrong end magic (5.5)", {.bad_end_magic = 1}},
        {"trailer-bad-index-count", "index_count one above the entries present (5.5)", {.short_count = 1}},
        {"trailer-bad-status", "\"status\" holding text: the TRAILER is invalid as a whole, its names are not "
         "applied (5.5)", {.bad_status = 1}},
    };
    for (size_t i = 0; i < sizeof badt / sizeof *badt; i++) {
        vec_begin(badt[i].name, badt[i].about);
        vec_header(NULL);
        w_meta(&META_STD, NULL);
        w_events(E, 3, NULL);
        w_status(&(tracelog_log_status){1, 1, 0, 0, 0, 0, 0, 0}, NULL);
        V.defined[0].id = 1, V.defined[0].name = "start"; /* named by the trailer only */
        V.ndefined = 1;
        expect_problem("BAD_TRAILER", w_trailer(&ST3, &badt[i].t, NULL), 0);
        vec_end();
    }

    vec_begin("trailer-bad-short", "a TRAILER payload of 16 bytes, below 28 (5.5)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_events(E, 3, NULL);
    expect_problem("BAD_TRAILER", w_block(5, "\x8BPTLEND\n\x8BPTLEND\n", 16, NULL), 0);
    vec_end();

    vec_begin("status-types-dropped", "1.1: a STATUS and TRAILER counting 2 event-type names the writer could not "
              "write: TYPES_DROPPED at the header, events of unknown ids read unnamed; not clean (5.4, 8.6, 8.8)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 1, NULL); /* "tick" (id 2) is one of the names dropped */
    w_events(E, 3, NULL);
    tracelog_log_status dropped = {3, 3, 0, 0, 0, 0, 2, 0};
    w_status(&dropped, NULL);
    w_trailer(&dropped, NULL, NULL);
    expect_problem("TYPES_DROPPED", 64, 0);
    vec_end();

    vec_begin("status-types-dropped-superseded", "1.1: types_dropped in an older STATUS only: the final status "
              "(highest seq) has none, so no problem; clean (5.4, 8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&(tracelog_log_status){3, 3, 0, 0, 0, 0, 1, 0}, NULL);
    w_trailer(&ST3, NULL, NULL);
    vec_end();

    vec_begin("trailer-payload-crc", "the TRAILER's payload checksum fails: not clean (8.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_status(&ST3, NULL);
    uint64_t t = w_trailer(&ST3, NULL, &(bopt){.bad_payload_crc = 1});
    expect_problem("PAYLOAD_CRC_MISMATCH", t, 240);
    vec_end();
    b_free(&b);
}

/* ---- 6 chunks ------------------------------------------------------------------------------------ */

/* A log around one chunk c of events ev, of which `deliver` are expected, with problem `cond` (or none). */
static void chunk_vector(const char *name, const char *about, chunk *c, const tracelog_event *ev, long deliver,
                         const char *cond, int whole_span)
{
    vec_begin(name, about);
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    uint64_t off = w_chunk(c, ev, deliver, NULL);
    uint64_t span = V.file.len - off;
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    if (cond)
        expect_problem(cond, off, whole_span ? span : 0);
    vec_end();
    chunk_free(c);
}

static void set_col(chunk *c, int col, const char *hex)
{
    c->col[col].len = 0;
    cb_raw(&c->col[col], hex);
}

static void chunk_vectors(void)
{
    chunk c;
    tracelog_event ev[4];
    std_events(ev);

    chunk_events(&c, E, 3);
    c.codec = 2;
    chunk_vector("chunk-bad-codec", "codec 2 (6.2, 6.7)", &c, E, 0, "BAD_CHUNK_HEADER", 1);
    chunk_events(&c, E, 3);
    c.min_ts = c.max_ts + 1;
    chunk_vector("chunk-bad-min-max", "min_ts above max_ts (6.7)", &c, E, 0, "BAD_CHUNK_HEADER", 1);
    chunk_events(&c, E, 3);
    c.count = 0;
    chunk_vector("chunk-bad-zero-events", "event_count 0 (6.7)", &c, E, 0, "BAD_CHUNK_HEADER", 1);
    chunk_events(&c, E, 3);
    c.count = 8; /* (52 - 24) / 4 = 7 */
    chunk_vector("chunk-bad-too-many-events", "event_count 8 in a 52-byte body: above (raw_size - 24) / 4 "
                 "(6.7)", &c, E, 0, "BAD_CHUNK_HEADER", 1);
    chunk_events(&c, E, 3);
    c.has_raw_size = 1, c.raw_size = 51;
    chunk_vector("chunk-bad-stored-size", "codec 0 with raw_size one below the stored bytes (6.7)", &c, E, 0,
                 "BAD_CHUNK_HEADER", 1);
    chunk_events(&c, E, 3);
    c.codec = 1, c.has_raw_size = 1, c.raw_size = 20;
    chunk_vector("chunk-bad-raw-size-20", "a zstd chunk declaring raw_size 20, below the 24-byte table (6.7)", &c,
                 E, 0, "BAD_CHUNK_HEADER", 1);

    vec_begin("chunk-bad-short-payload", "a CHUNK block of 16 payload bytes, below the chunk header (6.7)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    expect_problem("BAD_CHUNK_HEADER", w_block(3, "0123456789abcdef", 16, NULL), 48);
    vec_end();

    chunk_events(&c, E, 3);
    memcpy(c.reserved, "\x00\x02\x03\x04\x05\x06\x07", 7); /* byte 25 is body_format since 1.1 */
    chunk_vector("chunk-reserved-bytes", "non-zero reserved bytes 26-31 in the chunk header: ignored (6.1)", &c,
                 E, -1, NULL, 0);
    chunk_events(&c, E, 3);
    c.reserved[0] = 2;
    chunk_vector("chunk-bad-body-format", "body_format 2 (6.1, 6.7)", &c, E, 0, "BAD_CHUNK_HEADER", 1);

    chunk_events(&c, E, 3);
    c.codec = 1, c.zstd_no_size = 1;
    chunk_vector("chunk-zstd-no-size", "a zstd frame without Frame_Content_Size (6.2)", &c, E, 0, "BAD_CHUNK_BODY",
                 1);
    chunk_events(&c, E, 3);
    c.codec = 1, c.zstd_extra_frame = 1;
    chunk_vector("chunk-zstd-extra-frame", "a skippable frame after the zstd frame (6.2)", &c, E, 0,
                 "BAD_CHUNK_BODY", 1);
    chunk_events(&c, E, 3);
    c.codec = 1, c.has_raw_size = 1, c.raw_size = 56;
    chunk_vector("chunk-zstd-size-differs", "raw_size 56 while the frame holds 52 bytes (6.2)", &c, E, 0,
                 "BAD_CHUNK_BODY", 1);

    vec_begin("chunk-zstd-empty", "a zstd chunk with an empty stored body: 64 bytes of file pass the checks made "
              "when the block is found, and fail when read (6.7, 9.2)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    bytes p = {0};
    b_u64(&p, T0), b_u64(&p, T0), b_u32(&p, 1), b_u32(&p, 28), b_u8(&p, 1), b_fill(&p, 0, 7);
    uint64_t off = w_block(3, p.p, p.len, NULL);
    expect_problem("BAD_CHUNK_BODY", off, 64);
    b_free(&p);
    vec_end();

    vec_begin("chunk-zstd-bad-checksum", "a zstd frame whose content checksum fails (6.2)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    chunk_events(&c, E, 3);
    c.codec = 1, c.zstd_checksum = 1;
    bytes pl = {0};
    chunk_payload(&c, &pl);
    pl.p[pl.len - 1] ^= 0xFF; /* the checksum is the frame's last 4 bytes */
    off = w_block(3, pl.p, pl.len, NULL);
    expect_problem("BAD_CHUNK_BODY", off, span_at(off));
    chunk_free(&c);
    vec_end();

    vec_begin("chunk-bad-column-table", "a ts column length of 1000 in a 52-byte body (6.7)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    chunk_events(&c, E, 3);
    pl.len = 0;
    chunk_payload(&c, &pl);
    pl.p[32] = 0xE8, pl.p[33] = 0x03; /* the body's first word, ts_len: 1000 */
    off = w_block(3, pl.p, pl.len, NULL);
    expect_problem("BAD_CHUNK_BODY", off, span_at(off));
    chunk_free(&c);
    b_free(&pl);
    vec_end();

    /* Three events whose ts column holds 2 bytes (the third event's delta moved to the id column's start). */
    chunk_events(&c, E, 3);
    set_col(&c, 0, "00 00");
    set_col(&c, 1, "00 01 02 02");
    chunk_vector("chunk-bad-short-column", "a ts column of 2 bytes for 3 events: the table is refused before any "
                 "event (6.7)", &c, E, 0, "BAD_CHUNK_BODY", 1);

    chunk_events(&c, E, 3);
    c.flags.p[1] |= 0x20;
    chunk_vector("chunk-event-reserved-flag", "event 1's flags with a reserved bit: event 0 is delivered, then "
                 "BAD_EVENT (6.4, 6.7)", &c, E, 1, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    c.flags.p[2] |= 0x18;
    chunk_vector("chunk-event-trunc-3", "event 2's truncation value 3: events 0 and 1 are delivered (6.4, 6.7)", &c,
                 E, 2, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    c.max_ts = T0 + 1400;
    chunk_vector("chunk-event-ts-range", "max_ts below event 0's timestamp: no event is delivered (6.6 step 2)",
                 &c, E, 0, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    set_col(&c, 1, "01 02 80 80 80 80 10");
    chunk_vector("chunk-event-id-2-32", "event 2's id is 2^32 (6.6 step 3)", &c, E, 2, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    set_col(&c, 2, "80 80 80 80 10");
    chunk_vector("chunk-event-pid-2-32", "event 0's pid is 2^32 (6.6 step 4)", &c, E, 0, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    set_col(&c, 3, "07 88 80 80 80 80 80 80 80 80 80 00");
    chunk_vector("chunk-event-varint-11", "an 11-byte varint (6.5)", &c, E, 2, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    set_col(&c, 3, "07 88 80 80 80 80 80 80 80 80 02");
    chunk_vector("chunk-event-varint-overflow", "a 10-byte varint whose last byte is 02: above 2^64 - 1 (6.5)", &c,
                 E, 2, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    set_col(&c, 5, "02 09 00");
    chunk_vector("chunk-event-payload-long", "event 1's payload length 9 with 3 bytes left in data (6.6 step 7)",
                 &c, E, 1, "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    set_col(&c, 4, "80 c0 80");
    chunk_vector("chunk-event-varint-past-column", "the address column ends inside a varint (6.6)", &c, E, 0,
                 "BAD_EVENT", 0);
    chunk_events(&c, E, 3);
    b_u8(&c.col[0], 0);
    chunk_vector("chunk-trailing-column", "a byte left in the ts column after the last event: every event is "
                 "delivered, then CHUNK_TRAILING_DATA (6.7)", &c, E, -1, "CHUNK_TRAILING_DATA", 0);
    chunk_events(&c, E, 3);
    b_u8(&c.data, 'x');
    chunk_vector("chunk-trailing-data", "a byte left in data after the last payload (6.7)", &c, E, -1,
                 "CHUNK_TRAILING_DATA", 0);

    tracelog_event big[3] = {
        ev_make(0, 4294967295u, 4294967295u, UINT64_MAX, UINT64_MAX, 2, 0, NULL),
        ev_make(UINT64_MAX, 0, 0, 0, 0x10, 0, 1, "\x00"),
        ev_make(1, 7, 1, 1, UINT64_MAX - 1, 0, 0, NULL),
    };
    chunk_events(&c, big, 3);
    chunk_vector("chunk-extremes", "timestamps 0 and 2^64 - 1, ids and pids 2^32 - 1, a tid of 2^64 - 1 (a 10-byte "
                 "varint), addresses whose deltas wrap modulo 2^64, truncation 2 (6.5, 6.6)", &c, big, -1, NULL, 0);

    chunk_events(&c, E, 3);
    set_col(&c, 0, "e8 87 80 00 e7 07 f4 83 00");
    set_col(&c, 1, "81 00 02 82 80 80 00");
    c.flags.p[1] |= 0x03, c.flags.p[2] |= 0x05;
    set_col(&c, 2, "2a 2a 2a");
    set_col(&c, 3, "07 07 08");
    set_col(&c, 4, "80 c0 80 04 20 00");
    chunk_vector("chunk-non-shortest", "varints longer than needed and PID/TID/ADDR flags set for unchanged values: "
                 "accepted (6.4, 6.5)", &c, E, -1, NULL, 0);

    vec_begin("chunk-state-not-shared", "the second chunk's first event has no PID/TID/ADDR flag: its values are the "
              "initial 0s, not the previous chunk's (6.6)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    chunk_events(&c, E + 1, 1);
    c.flags.p[0] = 0;
    c.col[2].len = c.col[3].len = c.col[4].len = 0;
    tracelog_event zero = E[1];
    zero.pid = 0, zero.tid = 0, zero.address = 0;
    w_chunk(&c, &zero, -1, NULL);
    chunk_free(&c);
    w_trailer(&ST3, NULL, NULL);
    vec_end();

    vec_begin("limit-chunk-size", "a reader limit of 40 bytes on decoded chunks (limits file): a 52-byte chunk is "
              "CHUNK_TOO_LARGE (6.7, 9.1)");
    V.max_chunk_size = 40;
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    off = w_events(E, 3, &(bopt){.no_apply = 1});
    expect_problem("CHUNK_TOO_LARGE", off, 120);
    w_events(E, 1, NULL);
    vec_end();

    vec_begin("limit-block-size", "a reader limit of 256 bytes on block payloads (limits file): the 360-byte "
              "METADATA is BLOCK_TOO_LARGE, skipped unread (8.3, 9.1)");
    V.max_block_size = 256;
    vec_header(NULL);
    off = w_meta(&META_STD, &(bopt){.no_apply = 1});
    expect_problem("BLOCK_TOO_LARGE", off, 392);
    example_tail();
    vec_end();
}

/* ---- 2.2, 7.3, 8.5 rings ------------------------------------------------------------------------- */

#define SEG 4096u
#define RING_AT 4160u /* 64 + a 4096-byte durable region */

static uint64_t seg_at(unsigned i) { return RING_AT + (uint64_t)i * SEG; }

static void ring_header(unsigned count)
{
    vec_header(&(hopt){.layout = 1, .segment_size = SEG, .segment_count = count, .ring_offset = RING_AT});
}

static tracelog_metadata ring_meta(void)
{
    tracelog_metadata m = META_STD;
    m.log_full_policy = TRACELOG_POLICY_LOOP;
    m.log_max_size = 3 * SEG;
    return m;
}

/* Writes a chunk of one event (a payload of `size` bytes) at `at` with `seq`; returns the next offset. */
static uint64_t ring_chunk(uint64_t at, uint64_t seq, uint32_t n, int expect, const bopt *extra)
{
    static uint8_t payload[1024];
    memset(payload, (int)(seq & 0xff), sizeof payload);
    tracelog_event ev = ev_make(T0 + seq * 1000, 2, 42, 7, 0x401000, 0, n, payload);
    bopt o = extra ? *extra : (bopt){0};
    o.has_at = 1, o.at = at, o.has_seq = 1, o.seq = seq, o.no_apply = !expect || o.no_apply;
    w_events(&ev, 1, &o);
    return at + span_at(at);
}

static uint64_t ring_block(uint64_t at, uint64_t seq, uint16_t type)
{
    w_block(type, NULL, 0, &(bopt){.has_at = 1, .at = at, .has_seq = 1, .seq = seq});
    return at + 32;
}

/* Durable-region blocks after the first ones go where the region's last block ends. */
static uint64_t durable_end;

static uint64_t durable_types(uint32_t id, const char *name, uint64_t seq, int bad)
{
    uint64_t off = w_types(&id, &name, 1,
                           &(bopt){.has_at = 1, .at = durable_end, .has_seq = 1, .seq = seq, .bad_header_crc = bad});
    durable_end = off + span_at(off);
    return off;
}

static void ring_vectors(void)
{
    tracelog_metadata m = ring_meta();
    tracelog_log_status st = {4, 4, 0, 0, 0, 0, 0, 0};

    vec_begin("ring-first-lap", "a LOOP ring of 4 segments in its first lap: segments 0 and 1 used, the file ends "
              "after the last block; clean (2.2, 8.5)");
    ring_header(4);
    w_meta(&m, NULL);
    w_types(IDS, NAMES, 2, NULL);
    uint64_t p = ring_chunk(seg_at(0), 2, 1000, 1, NULL);
    p = ring_chunk(p, 3, 1000, 1, NULL);
    ring_block(p, 4, 6);
    p = ring_chunk(seg_at(1), 5, 1000, 1, NULL);
    p = w_status(&st, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 6});
    w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p + span_at(p), .has_seq = 1, .seq = 7});
    expect_clean(1);
    vec_end();

    /* A wrapped ring of 3 segments: laps 1 and 2; segment 0 rewritten last. */
    tracelog_log_status wrapped = {7, 7, 0, 2, 0, 1, 0, 0}; /* chunks 2 and 3 overwritten; full since the wrap */
    for (int variant = 0; variant < 5; variant++) {
        static const char *const names[] = {"ring-wrapped", "ring-segment-bad-start", "ring-segment-end-lost",
                                            "ring-durable-types-lost", "ring-trailer-then-durable-types"};
        static const char *const about[] = {
            "a ring of 3 segments after a wrap: segment 0 rewritten, its stale blocks ignored; read from segment 1 "
            "(oldest first seq) on; clean (8.5)",
            "the oldest segment's first block damaged: BAD_SEGMENT_START, the whole segment is lost, and reading "
            "starts at the next oldest (8.5)",
            "segment 1's last CHUNK damaged: scan_segment cannot see it, the sequence check reports it (8.5)",
            "the newest EVENT_TYPES block of the durable region damaged: the sequence check reports it, its name "
            "is lost (8.5)",
            "an EVENT_TYPES block in the durable region newer than the TRAILER: not clean (8.6)",
        };
        vec_begin(names[variant], about[variant]);
        ring_header(3);
        w_meta(&m, NULL);
        w_types(IDS, NAMES, 2, NULL);
        durable_end = V.file.len;
        /* Lap 1: segment 0 holds chunks 2, 3 and padding 4; segments 1 and 2 hold chunks 5, 7 and paddings. */
        p = ring_chunk(seg_at(0), 2, 1000, 0, NULL);
        p = ring_chunk(p, 3, 1000, 0, NULL);
        ring_block(p, 4, 6);
        int bad1 = variant == 1;
        p = ring_chunk(seg_at(1), 5, 1000, !bad1, &(bopt){.bad_header_crc = bad1});
        if (variant == 2)
            p = ring_chunk(p, 6, 1000, 0, &(bopt){.bad_header_crc = 1});
        else
            p = ring_chunk(p, 6, 1000, !bad1, NULL);
        uint64_t late = durable_types(3, "late", 7, variant == 3); /* defined between chunks 6 and 8 */
        p = ring_chunk(seg_at(2), 8, 1000, 1, NULL);
        p = ring_chunk(p, 9, 1000, 1, NULL);
        ring_block(p, 10, 6);
        /* Lap 2 rewrites segment 0: one chunk, the status and the trailer; the rest is lap 1's. */
        p = ring_chunk(seg_at(0), 11, 200, 1, NULL);
        p = w_status(&wrapped, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 12});
        w_trailer(&wrapped, NULL, &(bopt){.has_at = 1, .at = p + span_at(p), .has_seq = 1, .seq = 13});
        expect_clean(variant == 0);
        if (variant == 1)
            expect_problem("BAD_SEGMENT_START", seg_at(1), SEG);
        else if (variant == 2)
            expect_problem("SEQUENCE_BREAK", late, 0);
        else if (variant == 3)
            expect_problem("SEQUENCE_BREAK", seg_at(2), 0);
        else if (variant == 4)
            durable_types(4, "after", 14, 0);
        vec_end();
    }

    vec_begin("ring-never-written", "a ring pre-extended with zeros: a never-written segment is no problem (8.5)");
    ring_header(3);
    w_meta(&m, NULL);
    w_types(IDS, NAMES, 2, NULL);
    p = ring_chunk(seg_at(0), 2, 100, 1, NULL);
    w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 3});
    b_fill(&V.file, 0, seg_at(3) - V.file.len);
    expect_clean(1);
    vec_end();

    vec_begin("ring-damage-inside-segment", "junk between two blocks of a segment, a newer block after it: damage "
              "is reported (8.5)");
    ring_header(3);
    w_meta(&m, NULL);
    w_types(IDS, NAMES, 2, NULL);
    p = ring_chunk(seg_at(0), 2, 100, 1, NULL);
    b_fill(&V.file, 0x66, 24);
    expect_problem("BLOCK_HEADER_MISSING", p, 24);
    p = ring_chunk(p + 24, 3, 100, 1, NULL);
    w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 4});
    vec_end();

    vec_begin("ring-torn-first-block", "a crash tore the first block of a segment entered on a new lap: the "
              "segment still starts with the old lap's blocks, read and ordered by seq with the newer ones, and "
              "the torn block is reported by the sequence check (8.5)");
    ring_header(3);
    w_meta(&m, NULL);
    w_types(IDS, NAMES, 2, NULL);
    p = ring_chunk(seg_at(0), 2, 1000, 1, NULL);
    p = ring_chunk(p, 3, 1000, 1, NULL);
    uint64_t old_end = p;
    p = ring_chunk(seg_at(1), 4, 1000, 1, NULL);
    ring_block(p, 5, 6);
    p = ring_chunk(seg_at(2), 6, 1000, 1, NULL);
    ring_block(p, 7, 6);
    /* Lap 2 in segment 0: block 8 (at the segment's start) torn, block 9 written after it. */
    ring_chunk(old_end, 9, 100, 1, NULL);
    expect_problem("SEQUENCE_BREAK", old_end, 0);
    vec_end();

    vec_begin("ring-short-segment", "a ring on its first lap whose file ends 16 bytes into segment 1: a torn tail "
              "(8.5 step 8)");
    ring_header(3);
    w_meta(&m, NULL);
    w_types(IDS, NAMES, 2, NULL);
    p = ring_chunk(seg_at(0), 2, 100, 1, NULL);
    w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 3});
    b_fill(&V.file, 0, seg_at(1) - V.file.len);
    b_fill(&V.file, 0x8B, 16);
    expect_problem("TORN_TAIL", seg_at(1), 16);
    vec_end();

    vec_begin("ring-cut-short", "a wrapped ring whose file was cut inside segment 1, before its last segment: "
              "RING_CUT_SHORT at the end of the file, and the sequence check reports the blocks cut off (8.5)");
    ring_header(3);
    w_meta(&m, NULL);
    w_types(IDS, NAMES, 2, NULL);
    p = ring_chunk(seg_at(0), 2, 1000, 0, NULL);
    ring_block(p, 3, 6);
    p = ring_chunk(seg_at(1), 4, 1000, 1, NULL);
    uint64_t cut = p;
    ring_block(p, 5, 6);
    p = ring_chunk(seg_at(2), 6, 1000, 0, NULL);
    ring_block(p, 7, 6);
    p = ring_chunk(seg_at(0), 8, 200, 1, NULL);
    p = w_status(&st, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 9});
    w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p + span_at(p), .has_seq = 1, .seq = 10});
    V.file.len = cut;
    expect_problem("RING_CUT_SHORT", cut, 0);
    expect_problem("SEQUENCE_BREAK", seg_at(0), 0);
    expect_clean(0);
    vec_end();

    for (int variant = 0; variant < 3; variant++) {
        static const char *const names[] = {"ring-no-metadata", "ring-metadata-no-policy", "ring-metadata-append"};
        static const char *const about[] = {
            "a ring whose METADATA is lost: the log full policy is the layout's, \"loop\" (5.2)",
            "a ring whose METADATA has no log_full_policy: \"loop\" (5.2)",
            "a ring whose METADATA says \"append\": reported as written (5.2)",
        };
        vec_begin(names[variant], about[variant]);
        ring_header(3);
        bytes b = {0};
        if (variant == 0) {
            expect_problem("PAYLOAD_CRC_MISMATCH", w_meta(&m, &(bopt){.bad_payload_crc = 1}), 392);
        } else {
            tracelog_metadata w = m;
            w.log_full_policy = variant == 1 ? TRACELOG_POLICY_LOOP : TRACELOG_POLICY_APPEND;
            cb_map(&b, 14 - (variant == 1));
            bytes all = {0};
            meta_pairs(&all, &w);
            if (variant == 1) { /* drop the "log_full_policy": "loop" pair */
                static const char key[] = "\x6flog_full_policy\x64loop";
                uint8_t *k = memmem(all.p, all.len, key, sizeof key - 1);
                memmove(k, k + sizeof key - 1, all.len - (size_t)(k - all.p) - (sizeof key - 1));
                all.len -= sizeof key - 1;
            }
            b_put(&b, all.p, all.len);
            b_free(&all);
            w_meta_cbor(&b, NULL);
            V.want.meta = w;
        }
        w_types(IDS, NAMES, 2, NULL);
        p = ring_chunk(seg_at(0), 2, 100, 1, NULL);
        w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 3});
        expect_clean(variant != 0);
        b_free(&b);
        vec_end();
    }
}

/* ---- 7.4, 8.5 headed rings (format 1.1: SEGMENT blocks) -------------------------------------------- */

static void headed_header(unsigned count)
{
    vec_header(&(hopt){.has_minor = 1, .minor = 1, .compat = 1, .layout = 1, .segment_size = SEG,
                       .segment_count = count, .ring_offset = RING_AT});
}

/*
 * The SEGMENT block of segment i (7.4), naming segment `named` (i but in a misdirected write), with the
 * extent of an earlier lap that ended at extent_end (0: none); returns where the segment's next block goes.
 */
static uint64_t ring_seg_named(unsigned i, unsigned named, uint64_t seq, uint64_t lap, uint64_t extent_end,
                               const bopt *extra)
{
    bytes b = {0};
    b_u32(&b, named);
    b_u32(&b, extent_end ? (uint32_t)(extent_end - seg_at(i)) : 0);
    b_u64(&b, lap);
    bopt o = extra ? *extra : (bopt){0};
    o.has_at = 1, o.at = seg_at(i), o.has_seq = 1, o.seq = seq;
    w_block(8, b.p, b.len, &o);
    b_free(&b);
    return seg_at(i) + 48;
}

static uint64_t ring_seg(unsigned i, uint64_t seq, uint64_t lap, uint64_t extent_end, const bopt *extra)
{
    return ring_seg_named(i, i, seq, lap, extent_end, extra);
}

/* A PADDING block at `at`, its header CRC spoiled when bad; returns its end. */
static uint64_t ring_pad(uint64_t at, uint64_t seq, int bad)
{
    w_block(6, NULL, 0, &(bopt){.has_at = 1, .at = at, .has_seq = 1, .seq = seq, .bad_header_crc = bad});
    return at + 32;
}

/* The END marker (7.5) after the block at `at` of sequence number seq; returns its end. */
static uint64_t ring_end_marker(uint64_t at, uint64_t seq)
{
    uint64_t end = at + span_at(at);
    w_block(9, NULL, 0, &(bopt){.has_at = 1, .at = end, .has_seq = 1, .seq = seq, .no_apply = 1});
    return end + 32;
}

/* A full segment: SEGMENT block, two chunks (their events expected or, overwritten later, not), PADDING; returns its end. */
static uint64_t full_segment(unsigned i, uint64_t seq, uint64_t lap, int expect)
{
    uint64_t p = ring_seg(i, seq, lap, 0, NULL);
    p = ring_chunk(p, seq + 1, 1000, expect, NULL);
    p = ring_chunk(p, seq + 2, 1000, expect, NULL);
    return ring_pad(p, seq + 3, 0);
}

static uint64_t old_segment(unsigned i, uint64_t seq, uint64_t lap) { return full_segment(i, seq, lap, 0); }

static void headed_ring_vectors(void)
{
    tracelog_metadata m = ring_meta();
    tracelog_log_status wrapped = {7, 7, 0, 2, 0, 1, 0, 0};
    /* Lap 0 fills segments 0, 1, 2 (seqs 2..13); lap 1 rewrites segment 0 (seqs 14..17). */
    enum { WRAPPED, TORN_START, STALE_LAP, END_LOST, BAD_HEADER, WRONG_INDEX, NVARIANTS };
    static const char *const names[NVARIANTS] = {
        "ring-headed-wrapped", "ring-headed-torn-start", "ring-headed-stale-lap", "ring-headed-segment-end-lost",
        "ring-headed-bad-header", "ring-headed-wrong-index"};
    static const char *const about[NVARIANTS] = {
        "a ring with SEGMENT blocks (compatible flag 0) after a wrap: segment 0 rewritten on lap 1, its newest "
        "block followed by its END marker, then lap 0's older blocks, which are ignored; clean (7.4, 7.5, 8.5)",
        "a torn segment start: lap 1's SEGMENT block of segment 0 half written (its first 24 bytes new, the rest "
        "lap 0's): BAD_SEGMENT_HEADER over it, the segment is read from the block after it (8.5 steps 2, 5)",
        "a stale lap behind a segment header: lap 1's SEGMENT block and first chunk of segment 0 lost, its second "
        "chunk written inside lap 0's first: the head is lap 0's, stale since segment 2 ended with a PADDING "
        "block newer than it; lap 0's chunks are not delivered, lap 1's are (8.5 steps 3, 5)",
        "segment 1's last chunk and PADDING block damaged, a newer segment after it: SEGMENT_END_LOST at the end "
        "of its last block, no SEQUENCE_BREAK for the same loss (8.5 step 5)",
        "segment 1's SEGMENT block with a payload CRC that fails: BAD_SEGMENT_HEADER, every event still read "
        "(8.5 step 2)",
        "segment 1 starting with a SEGMENT block that names segment 2 (a misdirected write): BAD_SEGMENT_HEADER, "
        "every event still read (7.4, 8.5 step 2)",
    };
    for (int variant = 0; variant < NVARIANTS; variant++) {
        vec_begin(names[variant], about[variant]);
        headed_header(3);
        w_meta(&m, NULL);
        w_types(IDS, NAMES, 2, NULL);
        uint64_t end0 = old_segment(0, 2, 0);
        uint8_t old_head[48];
        memcpy(old_head, V.file.p + seg_at(0), sizeof old_head);
        uint64_t p;
        p = ring_seg_named(1, variant == WRONG_INDEX ? 2 : 1, 6, 0, 0, &(bopt){.bad_payload_crc = variant == BAD_HEADER});
        if (variant == BAD_HEADER || variant == WRONG_INDEX)
            expect_problem("BAD_SEGMENT_HEADER", seg_at(1), 48);
        p = ring_chunk(p, 7, 1000, 1, NULL);
        uint64_t end7 = p;
        p = ring_chunk(p, 8, 1000, variant != END_LOST, &(bopt){.bad_header_crc = variant == END_LOST});
        ring_pad(p, 9, variant == END_LOST);
        if (variant == END_LOST)
            expect_problem("SEGMENT_END_LOST", end7, seg_at(2) - end7);
        p = ring_seg(2, 10, 0, 0, NULL);
        p = ring_chunk(p, 11, 1000, 1, NULL);
        p = ring_chunk(p, 12, 1000, 1, NULL);
        ring_pad(p, 13, 0);
        if (variant == STALE_LAP) {
            /* Blocks 14 (SEGMENT) and 15 (a chunk at +48) never reached the file. */
            p = ring_chunk(seg_at(0) + 248, 16, 200, 1, NULL);
            p = w_status(&wrapped, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 17});
            p = w_trailer(&wrapped, NULL, &(bopt){.has_at = 1, .at = p + span_at(p), .has_seq = 1, .seq = 18});
            ring_end_marker(p, 18);
            expect_problem("BAD_SEGMENT_HEADER", seg_at(0), 248);
        } else {
            p = ring_seg(0, 14, 1, end0, NULL);
            if (variant == TORN_START) {
                memcpy(V.file.p + seg_at(0) + 24, old_head + 24, 24);
                expect_problem("BAD_SEGMENT_HEADER", seg_at(0), 48);
            }
            p = ring_chunk(p, 15, 200, 1, NULL);
            p = w_status(&wrapped, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 16});
            p = w_trailer(&wrapped, NULL, &(bopt){.has_at = 1, .at = p + span_at(p), .has_seq = 1, .seq = 17});
            ring_end_marker(p, 17);
        }
        expect_clean(variant == WRAPPED);
        vec_end();
    }

    /* Lap 0 fills the 3 segments, lap 1 writes smaller ones: the file keeps lap 0's length. */
    enum { LAST_END_LOST, CUT_NEWEST_LAST, NVARIANTS2 };
    static const char *const names2[NVARIANTS2] = {"ring-headed-last-segment-end-lost", "ring-headed-cut-newest-last"};
    static const char *const about2[NVARIANTS2] = {
        "tail damage in the last segment: lap 1's last chunk and PADDING block of segment 2 damaged, lap 0's "
        "blocks after them, lap 2 in segment 0: SEGMENT_END_LOST (8.5 step 5)",
        "a ring whose newest segment is its last one, the file cut just after its newest block's END marker, before "
        "what lap 0 wrote there (its SEGMENT block's extent): RING_CUT_SHORT (7.4, 8.5 step 8)",
    };
    for (int variant = 0; variant < NVARIANTS2; variant++) {
        vec_begin(names2[variant], about2[variant]);
        headed_header(3);
        w_meta(&m, NULL);
        w_types(IDS, NAMES, 2, NULL);
        uint64_t ends[3];
        for (unsigned i = 0; i < 3; i++)
            ends[i] = old_segment(i, 2 + 4 * i, 0);
        uint64_t p = ring_seg(0, 14, 1, ends[0], NULL);
        p = ring_chunk(p, 15, 200, variant == CUT_NEWEST_LAST, NULL);
        ring_pad(p, 16, 0);
        p = ring_seg(1, 17, 1, ends[1], NULL);
        p = ring_chunk(p, 18, 200, 1, NULL);
        ring_pad(p, 19, 0);
        p = ring_seg(2, 20, 1, ends[2], NULL);
        p = ring_chunk(p, 21, 200, 1, NULL);
        if (variant == CUT_NEWEST_LAST) {
            p = w_trailer(&wrapped, NULL, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 22});
            V.file.len = ring_end_marker(p, 22);
            expect_problem("RING_CUT_SHORT", V.file.len, 0);
        } else {
            uint64_t end21 = p;
            p = ring_chunk(p, 22, 200, 0, &(bopt){.bad_header_crc = 1});
            ring_pad(p, 23, 1);
            expect_problem("SEGMENT_END_LOST", end21, ends[2] - end21);
            p = ring_seg(0, 24, 2, ends[0], NULL);
            p = ring_chunk(p, 25, 200, 1, NULL);
            p = w_status(&wrapped, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 26});
            p = w_trailer(&wrapped, NULL, &(bopt){.has_at = 1, .at = p + span_at(p), .has_seq = 1, .seq = 27});
            ring_end_marker(p, 27);
        }
        expect_clean(0);
        vec_end();
    }
}

/*
 * The end of a headed ring's data (7.5, 8.5 step 8): the newest block is followed by its END marker in
 * the same write, so a torn last write is told from the end of the data on any lap.
 */
static void ring_end_vectors(void)
{
    tracelog_metadata m = ring_meta();
    tracelog_log_status st = {3, 3, 0, 0, 0, 0, 0, 0}, wrapped = {7, 7, 0, 2, 0, 1, 0, 0};
    enum { FIRST_LAP, FIRST_LAP_NO_END, TORN, PAYLOAD_TORN, END_LOST, STALE_END, NVARIANTS };
    static const char *const names[NVARIANTS] = {
        "ring-end-first-lap", "ring-end-first-lap-cut", "ring-end-newest-torn", "ring-end-newest-payload-torn",
        "ring-end-marker-lost", "ring-end-stale-marker"};
    static const char *const about[NVARIANTS] = {
        "a headed ring on its first lap, closed: its TRAILER followed by its END marker, then the end of the "
        "file; clean (7.5)",
        "the same ring cut exactly after its TRAILER, the END marker gone: TORN_TAIL at the end of the file, "
        "length 0; not clean (7.5, 8.5 step 8)",
        "a wrapped ring whose newest write (its TRAILER) was torn: its first 16 bytes written over the END "
        "marker of the STATUS block before it, the rest still the older bytes: TORN_TAIL from the end of the "
        "STATUS block to the end of the segment; every event read, not clean (7.5, 8.5 step 8)",
        "a wrapped ring whose newest write (its TRAILER) kept its header but not all its payload: "
        "PAYLOAD_CRC_MISMATCH for the TRAILER and TORN_TAIL after it (7.5, 8.5 step 8)",
        "a wrapped ring whose TRAILER is whole but whose END marker did not reach the file (lap 0's bytes "
        "there): TORN_TAIL after the TRAILER, not clean although the TRAILER is the newest block (7.5, 8.6)",
        "a wrapped ring whose TRAILER is followed by an older lap's END marker (seq 3), not its own: "
        "TORN_TAIL after the TRAILER (7.5)",
    };
    for (int variant = 0; variant < NVARIANTS; variant++) {
        vec_begin(names[variant], about[variant]);
        headed_header(3);
        w_meta(&m, NULL);
        w_types(IDS, NAMES, 2, NULL);
        if (variant == FIRST_LAP || variant == FIRST_LAP_NO_END) {
            uint64_t p = ring_seg(0, 2, 0, 0, NULL);
            p = ring_chunk(p, 3, 1000, 1, NULL);
            p = ring_chunk(p, 4, 1000, 1, NULL);
            p = w_status(&st, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 5});
            p = w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p + span_at(p), .has_seq = 1, .seq = 6});
            if (variant == FIRST_LAP) {
                ring_end_marker(p, 6);
            } else {
                expect_problem("TORN_TAIL", V.file.len, 0);
            }
            expect_clean(variant == FIRST_LAP);
            vec_end();
            continue;
        }
        /* Lap 0 fills segments 0, 1, 2 (seqs 2..13); lap 1 rewrites segment 0 (seqs 14..17). */
        for (unsigned i = 0; i < 3; i++)
            full_segment(i, 2 + 4 * i, 0, i > 0);
        uint64_t p = ring_seg(0, 14, 1, seg_at(1), NULL);
        p = ring_chunk(p, 15, 200, 1, NULL);
        p = w_status(&wrapped, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 16});
        uint64_t t = ring_end_marker(p, 16) - 32; /* where the TRAILER goes */
        uint8_t old[512];
        memcpy(old, V.file.p + t, sizeof old); /* what the TRAILER's write replaces */
        w_trailer(&wrapped, NULL, &(bopt){.has_at = 1, .at = t, .has_seq = 1, .seq = 17,
                                           .no_apply = variant == TORN || variant == PAYLOAD_TORN});
        uint64_t end = t + span_at(t);
        if (end + 32 > t + sizeof old) {
            fprintf(stderr, "gen_vectors: %s: the TRAILER outgrew its buffer\n", names[variant]);
            exit(1);
        }
        if (variant == STALE_END)
            w_block(9, NULL, 0, &(bopt){.has_at = 1, .at = end, .has_seq = 1, .seq = 3, .no_apply = 1});
        else
            ring_end_marker(t, 17);
        if (variant == TORN) {
            memcpy(V.file.p + t + 16, old + 16, end + 32 - t - 16);
            expect_problem("TORN_TAIL", t, seg_at(1) - t);
        } else if (variant == PAYLOAD_TORN) {
            memcpy(V.file.p + t + 64, old + 64, end + 32 - t - 64);
            expect_problem("PAYLOAD_CRC_MISMATCH", t, end - t);
            expect_problem("TORN_TAIL", end, seg_at(1) - end);
        } else {
            if (variant == END_LOST)
                memcpy(V.file.p + end, old + (end - t), 32);
            expect_problem("TORN_TAIL", end, seg_at(1) - end);
        }
        expect_clean(0);
        vec_end();
    }
}

/*
 * The end of a headed ring's durable region (8.5 step 1): it is never rewritten and its bytes after its
 * last block are zeros, so bytes that are neither are its lost last blocks, reported where they are.
 */
static void durable_end_vectors(void)
{
    tracelog_metadata m = ring_meta();
    tracelog_log_status st = {2, 2, 0, 0, 0, 0, 0, 0};
    enum { LOST, LAST_WRITE, FULL, NVARIANTS };
    static const char *const names[NVARIANTS] = {"ring-durable-end-lost", "ring-durable-last-write-torn",
                                                 "ring-durable-full"};
    static const char *const about[NVARIANTS] = {
        "a headed ring whose newest EVENT_TYPES block (seq 4, between two chunks) is damaged: DURABLE_END_LOST "
        "at the end of the block before it, and the SEQUENCE_BREAK of its number; its name is lost (8.5 steps 1, "
        "6)",
        "a headed ring whose last write, an EVENT_TYPES block after a checkpoint TRAILER, kept only its first "
        "16 bytes: DURABLE_END_LOST, not clean although the TRAILER is the newest block found (8.5 step 1, 8.6)",
        "a headed ring whose durable region ends 16 zero bytes after its last block: the region's end, no "
        "problem; clean (8.5 step 1)",
    };
    for (int variant = 0; variant < NVARIANTS; variant++) {
        vec_begin(names[variant], about[variant]);
        headed_header(3);
        w_meta(&m, NULL);
        w_types(IDS, NAMES, 2, NULL);
        durable_end = V.file.len;
        uint64_t p = ring_seg(0, 2, 0, 0, NULL);
        p = ring_chunk(p, 3, 100, 1, NULL);
        uint64_t seq = 4;
        if (variant == LOST) {
            uint64_t at = durable_end;
            durable_types(3, "late", seq++, 1);
            expect_problem("DURABLE_END_LOST", at, RING_AT - at);
        } else if (variant == FULL) {
            static uint8_t fill[4096];
            uint32_t len = (uint32_t)(RING_AT - 16 - durable_end - 32);
            w_block(100, fill, len, &(bopt){.has_at = 1, .at = durable_end, .has_seq = 1, .seq = seq++});
        }
        uint64_t c = p;
        p = ring_chunk(p, seq, 100, 1, NULL);
        if (variant == LOST)
            expect_problem("SEQUENCE_BREAK", c, 0);
        p = w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = seq + 1});
        ring_end_marker(p, seq + 1);
        if (variant == LAST_WRITE) {
            uint32_t id = 3;
            const char *name = "late";
            uint64_t at = durable_end;
            uint64_t off = w_types(&id, &name, 1,
                                   &(bopt){.has_at = 1, .at = at, .has_seq = 1, .seq = seq + 2, .no_apply = 1});
            memset(V.file.p + at + 16, 0, span_at(off) - 16);
            expect_problem("DURABLE_END_LOST", at, RING_AT - at);
        }
        expect_clean(variant == FULL);
        vec_end();
    }
}

/* ---- 6.8 keyed chunk bodies (format 1.1) ------------------------------------------------------------ */

/* The CHUNK payload of spec 13.7 (the events E in a keyed body, rows), and of 13.8 (planes). */
static const char KEYED_ROWS[] =
    "e8 03 2a 36 fe 9c 97 17 dc 05 2a 36 fe 9c 97 17 03 00 00 00 36 00 00 00 00 01 00 00 00 00 00 00"
    "03 00 00 00 18 00 00 00 02 00 00 00 00 00 00 00 00 01 2a 0e 80 c0 80 04 02 01 00 02 2a 00 20 03"
    "01 01 02 2a 02 00 00 01 00 01 02 e8 e7 f4 03 03 01 68 69 61 62 63";
static const char KEYED_PLANES[] =
    "00 00 2a 36 fe 9c 97 17 14 00 2a 36 fe 9c 97 17 03 00 00 00 27 00 00 00 00 01 00 00 00 00 00 00"
    "01 00 00 00 0a 00 00 00 01 00 00 00 00 00 00 00 04 03 2a 0e c0 c0 80 04 04 03 00 00 00 00 14 14"
    "0e 01 03 07 00 00 80";
#define KEYED_HEADER (&(hopt){.has_minor = 1, .minor = 1, .incompat = 1})

/*
 * A log around one CHUNK payload (hex, then `edits`: offset/value pairs, -1 ended), of which the first
 * `deliver` events of ev are expected, with problem cond at the chunk (span when whole_span) or none.
 */
static void keyed_vector(const char *name, const char *about, const hopt *h, const char *hex, const int *edits,
                         const tracelog_event *ev, size_t deliver, const char *cond, int whole_span)
{
    bytes p = {0};
    cb_raw(&p, hex);
    for (size_t i = 0; edits && edits[i] >= 0; i += 2)
        p.p[edits[i]] = (uint8_t)edits[i + 1];
    vec_begin(name, about);
    vec_header(h);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    uint64_t off = w_block(3, p.p, p.len, NULL);
    for (size_t i = 0; i < deliver; i++)
        expect_event(&ev[i]);
    uint64_t span = V.file.len - off;
    w_status(&ST3, NULL);
    w_trailer(&ST3, NULL, NULL);
    if (cond)
        expect_problem(cond, off, whole_span ? span : 0);
    vec_end();
    b_free(&p);
}

/* The keyed encoder (gen.c) writes the payload of spec 13.7 for the events of section 13. */
static int keyed_encoder_ok(void)
{
    bytes want = {0}, got = {0};
    cb_raw(&want, KEYED_ROWS);
    keyed_payload(E, 3, &got);
    int ok = got.len == want.len && memcmp(got.p, want.p, got.len) == 0;
    if (!ok)
        fprintf(stderr, "gen_vectors: the keyed encoder does not write the payload of spec 13.7\n");
    b_free(&want);
    b_free(&got);
    return ok;
}

static void keyed_vectors(void)
{
    static const uint8_t planes_payload[3][4] = {{0x01, 0, 0, 0x80}, {0x02, 0, 0, 0x80}, {0x05, 0, 0, 0x80}};
    tracelog_event pl[3];
    for (int i = 0; i < 3; i++)
        pl[i] = ev_make(T0 + 10 * (uint64_t)i, 3, 42, 7, 0x401020, 0, 4, planes_payload[i]);
    /* Offsets in the 13.7 payload: body at 32; key table at 48; key index plane at 72; ts planes at 75. */
    keyed_vector("keyed-rows", "the events of section 13 in a keyed body, payloads as rows (6.8, 13.7)",
                 KEYED_HEADER, KEYED_ROWS, NULL, E, 3, NULL, 0);
    keyed_vector("keyed-planes", "a key whose payloads are planes: a constant-plane bitmap, XOR deltas (6.8.3, 13.8)",
                 KEYED_HEADER, KEYED_PLANES, NULL, pl, 3, NULL, 0);
    keyed_vector("keyed-without-flag", "a keyed chunk in a file without incompatible flag bit 0: decoded by its "
                 "body_format (3.4)", NULL, KEYED_ROWS, NULL, E, 3, NULL, 0);
    keyed_vector("keyed-bad-reserved", "a reserved byte of the keyed body header set (6.8.1)", KEYED_HEADER,
                 KEYED_ROWS, (const int[]){32 + 9, 1, -1}, E, 0, "BAD_CHUNK_BODY", 1);
    keyed_vector("keyed-bad-ts-width", "ts_width 9 (6.8.6 rule 1)", KEYED_HEADER, KEYED_ROWS,
                 (const int[]){32 + 8, 9, -1}, E, 0, "BAD_CHUNK_BODY", 1);
    keyed_vector("keyed-bad-key-count", "key_count 4 for 3 events (6.8.6 rule 1)", KEYED_HEADER, KEYED_ROWS,
                 (const int[]){32, 4, -1}, E, 0, "BAD_CHUNK_BODY", 1);
    keyed_vector("keyed-bad-key-flags", "a reserved key flag bit (6.8.2)", KEYED_HEADER, KEYED_ROWS,
                 (const int[]){48, 0x08, -1}, E, 0, "BAD_CHUNK_BODY", 1);
    keyed_vector("keyed-bad-counts", "key counts adding up to 4 for 3 events (6.8.6 rule 3)", KEYED_HEADER,
                 KEYED_ROWS, (const int[]){57, 2, -1}, E, 0, "BAD_CHUNK_BODY", 1);
    keyed_vector("keyed-bad-payload-area", "key 0's length 3 instead of 2: the groups overrun the payload area "
                 "(6.8.6 rule 5)", KEYED_HEADER, KEYED_ROWS, (const int[]){56, 3, -1}, E, 0, "BAD_CHUNK_BODY", 1);
    keyed_vector("keyed-bad-bitmap", "a bitmap bit past the payload length (6.8.3)", KEYED_HEADER, KEYED_PLANES,
                 (const int[]){64, 0x1e, -1}, pl, 0, "BAD_CHUNK_BODY", 1);
    keyed_vector("keyed-event-key-index", "event 1's key index 3 of 3 keys: event 0 is delivered (6.8.6 rule 6)",
                 KEYED_HEADER, KEYED_ROWS, (const int[]){73, 3, -1}, E, 1, "BAD_EVENT", 0);
    keyed_vector("keyed-event-key-count", "event 2 uses key 0, whose count is 1, a second time: events 0 and 1 "
                 "are delivered (6.8.6 rule 7)", KEYED_HEADER, KEYED_ROWS, (const int[]){74, 0, -1}, E, 2,
                 "BAD_EVENT", 0);
    keyed_vector("keyed-event-ts-range", "event 1's delta 0x3E9 (-501: one below min_ts) (6.8.6 rule 8)",
                 KEYED_HEADER, KEYED_ROWS, (const int[]){76, 0xe9, -1}, E, 1, "BAD_EVENT", 0);
}

/* A THREADS payload (5.7) of n definitions; bad: the last entry has no ktid. */
static void threads_cbor(bytes *b, const uint64_t (*defs)[3], size_t n, int bad)
{
    cb_array(b, n);
    for (size_t i = 0; i < n; i++) {
        int drop_ktid = bad && i == n - 1;
        cb_map(b, drop_ktid ? 2 : 3);
        cb_text(b, "pid"), cb_uint(b, defs[i][0]);
        cb_text(b, "tid"), cb_uint(b, defs[i][1]);
        if (!drop_ktid)
            cb_text(b, "ktid"), cb_uint(b, defs[i][2]);
    }
}

static uint64_t w_threads(const uint64_t (*defs)[3], size_t n, int bad)
{
    bytes b = {0};
    threads_cbor(&b, defs, n, bad);
    uint64_t off = w_block(7, b.p, b.len, NULL);
    b_free(&b);
    return off;
}

/* Events of E with the kernel tids a reader gives them. */
static void with_ktids(tracelog_event out[3], uint32_t k7, uint32_t k8)
{
    for (int i = 0; i < 3; i++) {
        out[i] = E[i];
        out[i].kernel_tid = out[i].tid == 7 ? k7 : k8;
    }
}

static void threads_vectors(void)
{
    static const uint64_t first[][3] = {{42, 7, 100}, {42, 8, 101}, {43, 7, 999}};
    static const uint64_t reuse[][3] = {{42, 7, 102}};
    tracelog_event ev[3];
    vec_begin("threads-kernel-tids", "format 1.1 THREADS blocks: a chunk before any definition has kernel tid 0; "
              "definitions name the threads of later chunks; thread 7 reused by kernel thread 102 (5.7)");
    vec_header(&(hopt){.has_minor = 1, .minor = 1});
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    w_threads(first, 3, 0);
    with_ktids(ev, 100, 101);
    w_events(ev, 3, NULL);
    w_threads(reuse, 1, 0);
    with_ktids(ev, 102, 101);
    w_events(ev, 3, NULL);
    w_status(&(tracelog_log_status){9, 9, 0, 0, 0, 0, 0, 0}, NULL);
    w_trailer(&(tracelog_log_status){9, 9, 0, 0, 0, 0, 0, 0}, NULL, NULL);
    vec_end();

    vec_begin("status-threads-dropped", "1.1: a final status counting 3 thread definitions the writer could not "
              "write: THREADS_DROPPED at the header; events of threads never defined read kernel tid 0; not clean "
              "(5.4, 5.7, 8.8)");
    vec_header(&(hopt){.has_minor = 1, .minor = 1});
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_events(E, 3, NULL);
    tracelog_log_status dropped = {3, 3, 0, 0, 0, 0, 0, 3};
    w_status(&dropped, NULL);
    w_trailer(&dropped, NULL, NULL);
    expect_problem("THREADS_DROPPED", 64, 0);
    vec_end();

    vec_begin("limit-threads", "a reader limit of 2 thread definitions (limits file): a block of 3 keeps the "
              "first 2 (TOO_MANY_THREADS); events of the third thread read kernel tid 0 (5.7, 9.1)");
    V.max_threads = 2;
    vec_header(&(hopt){.has_minor = 1, .minor = 1});
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    expect_problem("TOO_MANY_THREADS", w_threads(first, 3, 0), 0);
    with_ktids(ev, 100, 101); /* (42, 7) and (42, 8): the first two definitions, kept */
    w_events(ev, 3, NULL);
    for (int i = 0; i < 3; i++) {
        ev[i] = E[i];
        ev[i].pid = 43; /* (43, 7) is the third definition, not kept: kernel tid 0 */
    }
    w_events(ev, 3, NULL);
    w_trailer(&(tracelog_log_status){6, 6, 0, 0, 0, 0, 0, 0}, NULL, NULL);
    vec_end();

    vec_begin("threads-bad-entry", "a THREADS block whose last entry has no ktid: the block is ignored as a "
              "whole, BAD_THREADS (5.7); an earlier valid block still applies");
    vec_header(&(hopt){.has_minor = 1, .minor = 1});
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_threads(reuse, 1, 0);
    expect_problem("BAD_THREADS", w_threads(first, 3, 1), 0);
    with_ktids(ev, 102, 0);
    w_events(ev, 3, NULL);
    w_trailer(&ST3, NULL, NULL);
    vec_end();
}

/* A thread definition with a name (format 1.2): kind 0 none, 1 text of name[0..len), 2 the uint 5 (a wrong type). */
typedef struct tdef {
    uint64_t pid, tid, ktid;
    int kind;
    const char *name;
    size_t len;
} tdef;

static uint64_t w_threads_named(const tdef *defs, size_t n)
{
    bytes b = {0};
    cb_array(&b, n);
    for (size_t i = 0; i < n; i++) {
        cb_map(&b, defs[i].kind ? 4 : 3);
        cb_text(&b, "pid"), cb_uint(&b, defs[i].pid);
        cb_text(&b, "tid"), cb_uint(&b, defs[i].tid);
        cb_text(&b, "ktid"), cb_uint(&b, defs[i].ktid);
        if (defs[i].kind == 1)
            cb_text(&b, "name"), cb_textn(&b, defs[i].name, defs[i].len);
        else if (defs[i].kind == 2)
            cb_text(&b, "name"), cb_uint(&b, 5);
    }
    uint64_t off = w_block(7, b.p, b.len, NULL);
    b_free(&b);
    return off;
}

/* The last n expected events get the names of their threads: tid 7's n7, tid 8's n8 (NULL: none). */
static void name_last(size_t n, const char *n7, const char *n8)
{
    for (size_t i = V.want.nevents - n; i < V.want.nevents; i++) {
        const char *name = V.want.events[i].ev.tid == 7 ? n7 : n8;
        vec_set_tname(&V.want.events[i], name, name ? strlen(name) : 0);
    }
}

#define TEXT(s) 1, s, sizeof s - 1

/* A format 1.2 vector whose first chunk's threads 7 and 8 are kernel threads 100 "main" and 101 "worker-1". */
static void named_start(const char *name, const char *about, tracelog_event ev[3])
{
    vec_begin(name, about);
    vec_header(&(hopt){.has_minor = 1, .minor = 2});
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    w_threads_named((const tdef[]){{42, 7, 100, TEXT("main")}, {42, 8, 101, TEXT("worker-1")}}, 2);
    with_ktids(ev, 100, 101);
    w_events(ev, 3, NULL);
    name_last(3, "main", "worker-1");
}

static void thread_name_vectors(void)
{
    tracelog_event ev[3];
    named_start("threads-names", "format 1.2 thread names: definitions name the threads of later chunks; a rename "
                "of the same thread (same ktid) names the chunks after it, not the earlier ones; a reused handle's "
                "new thread has no name until one is given (5.7)", ev);
    w_threads_named((const tdef[]){{42, 8, 101, TEXT("worker-1b")}}, 1);
    w_events(ev, 3, NULL);
    name_last(3, "main", "worker-1b");
    w_threads_named((const tdef[]){{42, 7, 102, 0, NULL, 0}}, 1);
    with_ktids(ev, 102, 101);
    w_events(ev, 3, NULL);
    name_last(3, NULL, "worker-1b");
    w_trailer(&(tracelog_log_status){9, 9, 0, 0, 0, 0, 0, 0}, NULL, NULL);
    vec_end();

    named_start("threads-name-bytes", "1.2: a thread name of 64 bytes, and one that is not UTF-8 and holds control "
                "bytes: delivered unchanged (5.1, 5.7)", ev);
    static const char long_name[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    w_threads_named((const tdef[]){{42, 7, 100, TEXT(long_name)}, {42, 8, 101, TEXT("w\x1b[31m\xff\n")}}, 2);
    w_events(ev, 3, NULL);
    name_last(3, long_name, "w\x1b[31m\xff\n");
    w_trailer(&ST3, NULL, NULL);
    vec_end();

    named_start("threads-bad-names", "1.2: names that are not text, longer than 64 bytes, hold a NUL or are empty "
                "are ignored, each definition still applies (its ktid), one BAD_THREAD_NAME per block; a rename "
                "with a bad name leaves the thread without a name (5.7)", ev);
    static const char too_long[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdefX";
    expect_problem("BAD_THREAD_NAME",
                   w_threads_named((const tdef[]){{42, 7, 100, 2, NULL, 0}, {42, 8, 101, TEXT(too_long)},
                                                  {43, 7, 200, TEXT("a\0b")}, {43, 8, 201, 1, "", 0}},
                                   4),
                   0);
    w_events(ev, 3, NULL);
    w_trailer(&ST3, NULL, NULL);
    vec_end();
}

/* ---- 6.10 merge sets (format 1.1) ------------------------------------------------------------------- */

#define MERGE_NEXT 0x01 /* chunk_flags bit 0 (byte 26 of the chunk header) */

/* A part of a merge set: the events its chunk delivers, in its order. */
typedef struct part {
    const tracelog_event *ev;
    size_t n;
} part;

/*
 * The reading of a merge set (6.10), written from the rule, not from the reader's heap: each time, the next
 * event of the part whose next event has the smallest timestamp, the first such part on a tie.
 */
static void expect_merged(const part *parts, size_t k)
{
    size_t pos[16] = {0};
    for (;;) {
        size_t best = k;
        for (size_t i = 0; i < k; i++)
            if (pos[i] < parts[i].n &&
                (best == k || parts[i].ev[pos[i]].timestamp_ns < parts[best].ev[pos[best]].timestamp_ns))
                best = i;
        if (best == k)
            return;
        expect_event(&parts[best].ev[pos[best]++]);
    }
}

/* Writes ev as a keyed chunk with chunk_flags `flags` (byte 26) and bytes 27-31 `reserved`; nothing is expected. */
static uint64_t w_set_chunk(const tracelog_event *ev, size_t n, uint8_t flags, uint8_t reserved, const bopt *o)
{
    bytes p = {0};
    keyed_payload(ev, n, &p);
    p.p[26] = flags;
    memset(p.p + 27, reserved, 5);
    uint64_t off = w_payload(&p, ev, 0, o);
    b_free(&p);
    return off;
}

/* Events of thread `tid` (pid 42) at T0 + each of ts[0..n), event id 2 ("tick") with a 1-byte payload. */
static void tick_events(tracelog_event *out, uint64_t tid, const uint64_t *ts, size_t n)
{
    static const uint8_t payload[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++)
        out[i] = ev_make(T0 + ts[i], 2, 42, tid, 0x401010, 0, 1, &payload[i % 16]);
}

static void merge_log_start(void)
{
    vec_header(KEYED_HEADER);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
}

static void merge_log_end(uint64_t events)
{
    tracelog_log_status st = {events, events, 0, 0, 0, 0, 0, 0};
    w_status(&st, NULL);
    w_trailer(&st, NULL, NULL);
}

static void merge_vectors(void)
{
    tracelog_event a[4], b[4], c[4], d[4];

    vec_begin("merge-set", "two keyed chunks with interleaved timestamps, MERGE_NEXT on the first: one merge set, "
              "its events merged by timestamp (6.10)");
    merge_log_start();
    tick_events(a, 7, (const uint64_t[]){0, 20, 40}, 3);
    tick_events(b, 8, (const uint64_t[]){10, 30, 50}, 3);
    w_set_chunk(a, 3, MERGE_NEXT, 0, NULL);
    w_set_chunk(b, 3, 0, 0, NULL);
    expect_merged((const part[]){{a, 3}, {b, 3}}, 2);
    merge_log_end(6);
    vec_end();

    vec_begin("merge-set-ties", "a set of three chunks with equal timestamps across them: on a tie, the chunk that "
              "comes first in the set (6.10)");
    merge_log_start();
    tick_events(a, 7, (const uint64_t[]){0, 10, 10}, 3);
    tick_events(b, 8, (const uint64_t[]){0, 10}, 2);
    tick_events(c, 9, (const uint64_t[]){10, 20}, 2);
    w_set_chunk(a, 3, MERGE_NEXT, 0, NULL);
    w_set_chunk(b, 2, MERGE_NEXT, 0, NULL);
    w_set_chunk(c, 2, 0, 0, NULL);
    expect_merged((const part[]){{a, 3}, {b, 2}, {c, 2}}, 3);
    merge_log_end(7);
    vec_end();

    vec_begin("merge-set-unsorted", "a set whose first chunk's timestamps go back (30, 10, 40): the rule still "
              "defines the order, each chunk's events keep theirs: 20, 30, 10, 35, 40 (6.10)");
    merge_log_start();
    tick_events(a, 7, (const uint64_t[]){30, 10, 40}, 3);
    tick_events(b, 8, (const uint64_t[]){20, 35}, 2);
    w_set_chunk(a, 3, MERGE_NEXT, 0, NULL);
    w_set_chunk(b, 2, 0, 0, NULL);
    expect_merged((const part[]){{a, 3}, {b, 2}}, 2);
    merge_log_end(5);
    vec_end();

    {
        static const uint64_t t7a[][3] = {{42, 7, 100}}, t8a[][3] = {{42, 8, 101}}, t7b[][3] = {{42, 7, 102}},
                              t8b[][3] = {{42, 8, 103}};
        vec_begin("merge-set-three", "a set of three chunks with THREADS blocks between them: its events get the "
                  "kernel tids defined before its last chunk (thread 7 redefined before it: 102 for all its "
                  "events); the definition after the set names the next set's events (5.7, 6.10)");
        merge_log_start();
        tick_events(a, 7, (const uint64_t[]){0, 15, 30}, 3);
        a[1].tid = 8;
        tick_events(b, 8, (const uint64_t[]){5, 35}, 2);
        tick_events(c, 7, (const uint64_t[]){10, 40}, 2);
        tick_events(d, 8, (const uint64_t[]){50}, 1);
        tick_events(d + 1, 7, (const uint64_t[]){60}, 1);
        w_threads(t7a, 1, 0);
        w_set_chunk(a, 3, MERGE_NEXT, 0, NULL);
        w_threads(t8a, 1, 0);
        w_set_chunk(b, 2, MERGE_NEXT, 0, NULL);
        w_threads(t7b, 1, 0);
        w_set_chunk(c, 2, 0, 0, NULL);
        w_threads(t8b, 1, 0);
        w_set_chunk(d, 2, 0, 0, NULL);
        for (int i = 0; i < 3; i++) {
            a[i].kernel_tid = a[i].tid == 7 ? 102 : 101;
            b[i].kernel_tid = 101;
            c[i].kernel_tid = 102;
        }
        d[0].kernel_tid = 103, d[1].kernel_tid = 102;
        expect_merged((const part[]){{a, 3}, {b, 2}, {c, 2}}, 3);
        expect_merged((const part[]){{d, 2}}, 1);
        merge_log_end(9);
        vec_end();
    }

    vec_begin("merge-set-dropped", "the middle chunk of a set fails its payload checksum and has no MERGE_NEXT: its "
              "flag is not trusted, the set goes on and merges the first and third chunks; the fourth is a set of "
              "its own (6.7, 6.10)");
    merge_log_start();
    tick_events(a, 7, (const uint64_t[]){0, 20}, 2);
    tick_events(b, 8, (const uint64_t[]){5, 25}, 2);
    tick_events(c, 9, (const uint64_t[]){10, 30}, 2);
    tick_events(d, 7, (const uint64_t[]){1}, 1);
    w_set_chunk(a, 2, MERGE_NEXT, 0, NULL);
    uint64_t off = w_set_chunk(b, 2, 0, 0, &(bopt){.bad_payload_crc = 1});
    expect_problem("PAYLOAD_CRC_MISMATCH", off, span_at(off));
    w_set_chunk(c, 2, 0, 0, NULL);
    w_set_chunk(d, 1, 0, 0, NULL);
    expect_merged((const part[]){{a, 2}, {c, 2}}, 2);
    expect_merged((const part[]){{d, 1}}, 1);
    merge_log_end(7);
    vec_end();

    vec_begin("merge-set-bad-event", "a set whose first chunk has an invalid second event (key index out of range): "
              "its first event takes part in the merge, BAD_EVENT (6.7, 6.8.6, 6.10)");
    merge_log_start();
    tick_events(a, 7, (const uint64_t[]){0, 20, 40}, 3);
    a[1].tid = 8, a[2].tid = 9; /* three keys: event 1's index is the plane's second byte */
    tick_events(b, 8, (const uint64_t[]){10, 30}, 2);
    {
        bytes p = {0};
        keyed_payload(a, 3, &p);
        p.p[26] = MERGE_NEXT;
        uint32_t keys_len = (uint32_t)p.p[36] | (uint32_t)p.p[37] << 8;
        p.p[32 + 16 + keys_len + 1] = 3; /* key index 3 of 3 keys */
        off = w_payload(&p, a, 0, NULL);
        b_free(&p);
    }
    expect_problem("BAD_EVENT", off, 0);
    w_set_chunk(b, 2, 0, 0, NULL);
    expect_merged((const part[]){{a, 1}, {b, 2}}, 2);
    merge_log_end(5);
    vec_end();

    vec_begin("merge-set-open-end", "the log's last chunk has MERGE_NEXT: its set ends with the log; the chunk "
              "before the set is a set of its own (6.10)");
    merge_log_start();
    tick_events(a, 7, (const uint64_t[]){0, 50}, 2);
    tick_events(b, 7, (const uint64_t[]){60, 80}, 2);
    tick_events(c, 8, (const uint64_t[]){55, 70}, 2);
    w_set_chunk(a, 2, 0, 0, NULL);
    w_set_chunk(b, 2, MERGE_NEXT, 0, NULL);
    w_set_chunk(c, 2, MERGE_NEXT, 0, NULL);
    expect_merged((const part[]){{a, 2}}, 1);
    expect_merged((const part[]){{b, 2}, {c, 2}}, 2);
    merge_log_end(6);
    vec_end();

    vec_begin("merge-set-flag-bits", "chunk_flags bits 1-7 and bytes 27-31 set: ignored; a chunk with 0xFE is a set "
              "of its own, one with 0xFF joins the next (6.1, 6.10)");
    merge_log_start();
    tick_events(a, 7, (const uint64_t[]){10, 30}, 2);
    tick_events(b, 8, (const uint64_t[]){0, 20}, 2);
    tick_events(c, 9, (const uint64_t[]){5, 25}, 2);
    w_set_chunk(a, 2, 0xFE, 0xFF, NULL);
    w_set_chunk(b, 2, 0xFF, 0xFF, NULL);
    w_set_chunk(c, 2, 0x00, 0xAA, NULL);
    expect_merged((const part[]){{a, 2}}, 1);
    expect_merged((const part[]){{b, 2}, {c, 2}}, 2);
    merge_log_end(6);
    vec_end();

    {
        /* Chunk sizes: each a keyed body of 2 events of one key: the limit fits two of them, not three. */
        bytes p = {0};
        tick_events(a, 7, (const uint64_t[]){0, 30}, 2);
        keyed_payload(a, 2, &p);
        uint32_t one = (uint32_t)p.len - 32;
        b_free(&p);
        vec_begin("limit-merge-set", "a reader limit on decoded chunks that holds two chunks of a four-chunk set "
                  "(limits file): MERGE_SET_TOO_LARGE at the third, which starts the next set; every event is "
                  "delivered, each part merged on its own (6.10, 9.1)");
        V.max_chunk_size = 2 * one + one / 2;
        merge_log_start();
        tick_events(b, 8, (const uint64_t[]){10, 40}, 2);
        tick_events(c, 9, (const uint64_t[]){20, 50}, 2);
        tick_events(d, 7, (const uint64_t[]){25, 60}, 2);
        w_set_chunk(a, 2, MERGE_NEXT, 0, NULL);
        w_set_chunk(b, 2, MERGE_NEXT, 0, NULL);
        expect_problem("MERGE_SET_TOO_LARGE", w_set_chunk(c, 2, MERGE_NEXT, 0, NULL), 0);
        w_set_chunk(d, 2, 0, 0, NULL);
        expect_merged((const part[]){{a, 2}, {b, 2}}, 2);
        expect_merged((const part[]){{c, 2}, {d, 2}}, 2);
        merge_log_end(8);
        vec_end();

        vec_begin("limit-merge-set-chunk", "a chunk above the reader's limit on decoded chunks (limits file) in "
                  "the middle of a set: CHUNK_TOO_LARGE, dropped, and the set goes on: no MERGE_SET_TOO_LARGE "
                  "(6.7, 6.10, 9.1)");
        V.max_chunk_size = 2 * one + one / 2;
        merge_log_start();
        tracelog_event big[8];
        tick_events(big, 8, (const uint64_t[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
        for (int i = 0; i < 8; i++)
            big[i].tid = 100 + (uint64_t)i; /* eight keys: a body larger than the limit */
        w_set_chunk(a, 2, MERGE_NEXT, 0, NULL);
        off = w_set_chunk(big, 8, MERGE_NEXT, 0, NULL);
        expect_problem("CHUNK_TOO_LARGE", off, span_at(off));
        w_set_chunk(c, 2, 0, 0, NULL);
        expect_merged((const part[]){{a, 2}, {c, 2}}, 2);
        merge_log_end(12);
        vec_end();
    }

    vec_begin("merge-set-ring", "a ring whose merge set spans two segments: read by seq, the set's chunks merged "
              "across the PADDING block that ends the first segment (8.5, 6.10)");
    {
        tracelog_metadata m = ring_meta();
        tracelog_log_status st = {5, 5, 0, 0, 0, 0, 0, 0};
        vec_header(&(hopt){.has_minor = 1, .minor = 1, .incompat = 1, .layout = 1, .segment_size = SEG,
                           .segment_count = 3, .ring_offset = RING_AT});
        w_meta(&m, NULL);
        w_types(IDS, NAMES, 2, NULL);
        tick_events(a, 7, (const uint64_t[]){100}, 1);
        tick_events(b, 7, (const uint64_t[]){200, 400}, 2);
        tick_events(c, 8, (const uint64_t[]){300, 500}, 2);
        uint64_t p = seg_at(0);
        p += span_at(w_set_chunk(a, 1, 0, 0, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 2}));
        p += span_at(w_set_chunk(b, 2, MERGE_NEXT, 0, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 3}));
        ring_block(p, 4, 6);
        p = seg_at(1);
        p += span_at(w_set_chunk(c, 2, 0, 0, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 5}));
        p += span_at(w_status(&st, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 6}));
        w_trailer(&st, NULL, &(bopt){.has_at = 1, .at = p, .has_seq = 1, .seq = 7});
        expect_merged((const part[]){{a, 1}}, 1);
        expect_merged((const part[]){{b, 2}, {c, 2}}, 2);
        expect_clean(1);
    }
    vec_end();

    vec_begin("merge-set-format-1.0", "a format 1.0 file whose two column chunks interleave in time, byte 26 zero: "
              "each chunk is a set of its own, delivered chunk after chunk (6.1, 6.10)");
    vec_header(NULL);
    w_meta(&META_STD, NULL);
    w_types(IDS, NAMES, 2, NULL);
    tick_events(a, 7, (const uint64_t[]){0, 20}, 2);
    tick_events(b, 8, (const uint64_t[]){10, 30}, 2);
    w_events(a, 2, NULL);
    w_events(b, 2, NULL);
    merge_log_end(4);
    vec_end();
}

int main(int argc, char **argv)
{
    int check = argc == 3 && strcmp(argv[1], "--check") == 0;
    if (argc != 2 + check) {
        fprintf(stderr, "usage: gen_vectors [--check] DIR\n");
        return 2;
    }
    if (xxh64((const uint8_t *)"", 0, 0) != 0xEF46DB3751D8E999ull) {
        fprintf(stderr, "gen_vectors: xxh64 self-test failed\n");
        return 2;
    }
    std_events(E);
    if (!keyed_encoder_ok())
        return 2;
    gen_start(argv[1 + check], check);
    header_vectors();
    valid_vectors();
    damage_vectors();
    torn_vectors();
    cbor_vectors();
    metadata_vectors();
    types_vectors();
    status_trailer_vectors();
    chunk_vectors();
    keyed_vectors();
    ring_vectors();
    headed_ring_vectors();
    ring_end_vectors();
    durable_end_vectors();
    threads_vectors();
    thread_name_vectors();
    merge_vectors();
    return gen_finish();
}
