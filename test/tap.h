/* A minimal TAP producer for perflink's C tests (meson runs them with
 * protocol: 'tap'). Each check prints "ok N - what" or "not ok N - what" with
 * the file and line of a failure; tap_done() prints the plan and returns the
 * exit status. */
#ifndef PL_TEST_TAP_H
#define PL_TEST_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failed;

#define TAP_OK(cond, ...)                                                  \
	do {                                                               \
		int tap_c_ = (cond);                                       \
		tap_count++;                                               \
		if (!tap_c_)                                               \
			tap_failed++;                                      \
		printf("%s %d - ", tap_c_ ? "ok" : "not ok", tap_count);   \
		printf(__VA_ARGS__);                                       \
		printf("\n");                                              \
		if (!tap_c_)                                               \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		fflush(stdout);                                            \
	} while (0)

#define TAP_EQ_U64(got, want, what)                                             \
	do {                                                                    \
		uint64_t tap_g_ = (uint64_t)(got), tap_w_ = (uint64_t)(want);  \
		TAP_OK(tap_g_ == tap_w_, "%s", what);                           \
		if (tap_g_ != tap_w_)                                           \
			printf("#   got %" PRIu64 ", want %" PRIu64 "\n", tap_g_, tap_w_); \
	} while (0)

#define TAP_EQ_STR(got, want, what)                                          \
	do {                                                                 \
		const char *tap_g_ = (got), *tap_w_ = (want);                \
		int tap_e_ = tap_g_ && tap_w_ && strcmp(tap_g_, tap_w_) == 0; \
		TAP_OK(tap_e_, "%s", what);                                  \
		if (!tap_e_)                                                 \
			printf("#   got '%s', want '%s'\n", tap_g_ ? tap_g_ : "(null)", \
			       tap_w_ ? tap_w_ : "(null)");                  \
	} while (0)

#define TAP_SKIP(why) printf("ok %d # SKIP %s\n", ++tap_count, why)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
