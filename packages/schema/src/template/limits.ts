/**
 * Limits that keep a hostile or mistaken template (or props that drive a loop) from hanging or
 * crashing the process; going past one is a `TEMPLATE_LIMIT` error.
 */

/** Most loop iterations (all loops together) one render may run. */
export const MAX_LOOP_ITERATIONS = 1_000_000;

/** Longest output one render may produce, in UTF-16 code units (32 Mi; loops are what grow output). */
export const MAX_OUTPUT_LENGTH = 32 * 1024 * 1024;

/** Deepest nesting of blocks a template may have (checked when parsing). */
export const MAX_BLOCK_DEPTH = 100;
