/* srchash.h -- the identity of the kernel sources, for the GPU verification gate.
 *
 *   char hex[SH_HEX];
 *   char err[256];
 *   if (sh_dir_hash("kernels", 2, hex, err, sizeof err) != SH_OK) -> err says why
 *
 * Both schemes hash the same files: every *.cu, *.cuh, *.h, *.c, *.cmake and CMakeLists.txt
 * directly in the folder, except test_*, sorted by name (byte order), as SHA-256 over the
 * lines "<name> <sha256 of the file, hex>\n".
 *   scheme 1 (kernels/source_hash.cmake, the legacy hash) hashes each file's bytes: any
 *            edit, a comment too, makes a new hash;
 *   scheme 2 hashes each file's normalized text (sh_normalize_c / sh_normalize_cmake), so an
 *            edit of comments or layout keeps the hash and a code edit does not.
 * Normalizing C, C++ and CUDA (after splicing backslash-newlines, as the compiler does):
 * comments are removed; string and character literals are kept byte for byte (a "//" or
 * "/-star" inside one is not a comment; so are C++ raw strings and 1'000 digit separators);
 * whitespace is removed, except one space where removing it could join two tokens into
 * another (two identifier or number characters; an identifier and a quote, as in L"x"; two
 * punctuators that begin a longer one, such as "+ +", "- >", "/ *"), one space after the
 * name of a #define that is followed by whitespace (so "#define F (x)" and "#define F(x)"
 * differ), and one newline at the end of each preprocessor directive. So two files with the
 * same normalized text are the same token sequence. CMake files: '#' comments removed
 * outside quoted arguments, runs of spaces and tabs made one space, blank lines dropped,
 * quoted arguments kept as they are.
 * A library: nothing printed, no exit; SH_* status codes.
 */
#ifndef ADALOAD_SRCHASH_H
#define ADALOAD_SRCHASH_H

#include <stddef.h>
#include <stdint.h>

enum { SH_HEX = 65 };

typedef enum { SH_OK = 0, SH_IO = 1, SH_NOMEM = 2, SH_BAD_ARG = 3 } sh_status;
const char *sh_strerror(sh_status s);

/* SHA-256 (FIPS 180-4) of data[0..n), as 64 lower-case hex digits and a NUL. */
void sh_sha256_hex(const void *data, size_t n, char hex[SH_HEX]);

/* Normalized text of one source (a new buffer in *out, length *out_n; free()). */
sh_status sh_normalize_c(const char *in, size_t n, char **out, size_t *out_n);
sh_status sh_normalize_cmake(const char *in, size_t n, char **out, size_t *out_n);

/* The hash of folder dir under scheme 1 or 2; with lines != NULL also the hashed text (a new
 * NUL-terminated buffer: the "<name> <hash>\n" lines). */
sh_status sh_dir_hash(const char *dir, int scheme, char hex[SH_HEX], char **lines, char *err,
                      size_t err_n);

#endif
