/* bbvfl public API: the version of the headers and of the library actually linked.
 *
 * The header's numbers are those of the headers compiled against; bbvfl_version_number() and
 * bbvfl_version_string() are those of the library loaded at run time. A program may compare the
 * two to refuse a library older than its headers. The shared library's SONAME carries the ABI
 * version (libbbvfl.so.N), which changes with any incompatible change of include/bbvfl/.
 *
 * CMakeLists.txt checks at configure time that these numbers equal the project's version. */
#ifndef BBVFL_PUBLIC_VERSION_H
#define BBVFL_PUBLIC_VERSION_H

#include "bbvfl/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BBVFL_VERSION_MAJOR 0
#define BBVFL_VERSION_MINOR 1
#define BBVFL_VERSION_PATCH 0
#define BBVFL_VERSION_STRING "0.1.0"
/* One comparable number: major * 10000 + minor * 100 + patch. */
#define BBVFL_VERSION_NUMBER (BBVFL_VERSION_MAJOR * 10000 + BBVFL_VERSION_MINOR * 100 + BBVFL_VERSION_PATCH)

/* The linked library's version as "MAJOR.MINOR.PATCH": a static string, never NULL. */
BBVFL_API const char *bbvfl_version_string(void);
/* The linked library's version as BBVFL_VERSION_NUMBER computes it. */
BBVFL_API int bbvfl_version_number(void);

#ifdef __cplusplus
}
#endif

#endif
