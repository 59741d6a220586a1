/* bbvfl public API: the attributes every public declaration carries.
 *
 * BBVFL_API                 marks a function of the public API. The shared library exports these
 *                           and nothing else (the library is built with hidden visibility).
 * BBVFL_WARN_UNUSED_RESULT  on every function whose result tells success from failure: ignoring it
 *                           is a compiler warning.
 * BBVFL_ARG_NONNULL(i)      argument i (1-based) must not be NULL. Outside code gets a compiler
 *                           warning for a literal NULL there; inside the library the attribute is
 *                           off, so the runtime checks stay: a NULL where this is declared is
 *                           answered with BBVFL_STATUS_ARG, never a crash.
 *
 * This header includes nothing of the library's internals: include/bbvfl/ is self-contained. */
#ifndef BBVFL_PUBLIC_COMMON_H
#define BBVFL_PUBLIC_COMMON_H

#if defined(__GNUC__) && defined(BBVFL_BUILD)
#  define BBVFL_API __attribute__((visibility("default")))
#else
#  define BBVFL_API
#endif

#if defined(__GNUC__) && ((__GNUC__ > 3) || (__GNUC__ == 3 && __GNUC_MINOR__ >= 4))
#  define BBVFL_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#else
#  define BBVFL_WARN_UNUSED_RESULT
#endif

#if !defined(BBVFL_BUILD) && defined(__GNUC__) && ((__GNUC__ > 3) || (__GNUC__ == 3 && __GNUC_MINOR__ >= 3))
#  define BBVFL_ARG_NONNULL(i) __attribute__((nonnull(i)))
#else
#  define BBVFL_ARG_NONNULL(i)
#endif

#endif
