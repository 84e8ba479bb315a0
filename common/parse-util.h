/* parse-util.h: parsing and formatting of the value types config and
 * command line share: durations, sizes, booleans, numbers, file modes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* "10s", "5min", "1h 30min", "250ms"; a bare number is seconds. */
int parse_duration(const char *s, uint64_t *ret_usec);
/* "65536", "64K", "64KiB", "1M" (powers of 1024). */
int parse_size(const char *s, uint64_t *ret_bytes);
int parse_boolean(const char *s);
int parse_uint64(const char *s, uint64_t *ret);
int parse_unsigned(const char *s, unsigned *ret);
int parse_mode(const char *s, mode_t *ret);

#define FORMAT_DURATION_MAX 64
#define FORMAT_SIZE_MAX 32
/* Exact, and accepted back by the parsers above. */
char *format_duration(char *buf, size_t len, uint64_t usec);
char *format_size(char *buf, size_t len, uint64_t bytes);
/* Bytes for a reader: "812 B", "535 KiB", "1.2 GiB" (binary units, two
 * significant digits below ten, none after the point above). */
char *format_bytes(char *buf, size_t len, double bytes);
