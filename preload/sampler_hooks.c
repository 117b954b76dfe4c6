/* The frame-boundary hooks: eglSwapBuffers and its damage variants,
 * glXSwapBuffers. Exported whether or not the program uses EGL or GLX;
 * dormant (PERFLINK_SAMPLE unset) each is one flag test and a forward.
 *
 * The real function is looked up on first call, not in the constructor:
 * libEGL is often dlopen'ed by a toolkit after start, and a lookup before
 * that would find nothing. RTLD_NEXT finds a library in the global scope;
 * one dlopen'ed with RTLD_LOCAL is found by its usual soname. The types
 * stand in for EGL's and GLX's so that no EGL or X headers are needed:
 * EGLBoolean and EGLint are 32-bit, handles are pointers, a GLXDrawable
 * is an XID (unsigned long). */
#include "real_symbol.h"
#include "sampler.h"
#include "stand_in.h"

#include <stdint.h>
#include <string.h>

#define PL_EXPORT __attribute__((visibility("default")))

typedef unsigned int pl_egl_bool;
typedef int32_t pl_egl_int;
typedef pl_egl_bool (*pl_egl_swap_fn)(void *, void *);
typedef pl_egl_bool (*pl_egl_swap_damage_fn)(void *, void *, pl_egl_int *, pl_egl_int);
typedef void (*pl_glx_swap_fn)(void *, unsigned long);

/* The real function, resolved once into slot (real_symbol.h); NULL when
 * nothing after the shim defines it. */
#define REAL(slot, type, name, soname)                                            \
	__extension__({                                                           \
		void *p_ = __atomic_load_n(&(slot), __ATOMIC_ACQUIRE);             \
		type f_;                                                          \
		if (!p_)                                                          \
			p_ = pl__real_symbol(&(slot), name, soname);              \
		memcpy(&f_, &p_, sizeof(f_)); /* POSIX: a function's address fits */ \
		f_;                                                               \
	})

/* The hooks' own prototypes: no EGL or GLX header declares them here. */
PL_EXPORT pl_egl_bool eglSwapBuffers(void *dpy, void *surface);
PL_EXPORT pl_egl_bool eglSwapBuffersWithDamageKHR(void *dpy, void *surface, pl_egl_int *rects,
						   pl_egl_int n);
PL_EXPORT pl_egl_bool eglSwapBuffersWithDamageEXT(void *dpy, void *surface, pl_egl_int *rects,
						   pl_egl_int n);
PL_EXPORT void glXSwapBuffers(void *dpy, unsigned long drawable);

/* What each forwards to (pl__real_symbol, or a program's own lookup:
 * stand_in.h). */
static void *real_egl_swap, *real_egl_swap_khr, *real_egl_swap_ext, *real_glx_swap;

#define ACTIVE() __builtin_expect(__atomic_load_n(&pl__sampler_on, __ATOMIC_RELAXED), 0)

PL_EXPORT pl_egl_bool eglSwapBuffers(void *dpy, void *surface)
{
	pl_egl_swap_fn f = REAL(real_egl_swap, pl_egl_swap_fn, "eglSwapBuffers", "libEGL.so.1");
	pl_egl_bool r;

	if (!f)
		return 0; /* EGL_FALSE: there is no EGL to call */
	if (!ACTIVE())
		return f(dpy, surface);
	pl__sampler_swap_enter();
	r = f(dpy, surface);
	pl__sampler_swap_exit();
	return r;
}

static pl_egl_bool swap_damage(pl_egl_swap_damage_fn f, void *dpy, void *surface,
			       pl_egl_int *rects, pl_egl_int n)
{
	pl_egl_bool r;

	if (!f)
		return 0;
	if (!ACTIVE())
		return f(dpy, surface, rects, n);
	pl__sampler_swap_enter();
	r = f(dpy, surface, rects, n);
	pl__sampler_swap_exit();
	return r;
}

PL_EXPORT pl_egl_bool eglSwapBuffersWithDamageKHR(void *dpy, void *surface, pl_egl_int *rects,
						   pl_egl_int n)
{
	return swap_damage(REAL(real_egl_swap_khr, pl_egl_swap_damage_fn,
				"eglSwapBuffersWithDamageKHR", "libEGL.so.1"),
			   dpy, surface, rects, n);
}

PL_EXPORT pl_egl_bool eglSwapBuffersWithDamageEXT(void *dpy, void *surface, pl_egl_int *rects,
						   pl_egl_int n)
{
	return swap_damage(REAL(real_egl_swap_ext, pl_egl_swap_damage_fn,
				"eglSwapBuffersWithDamageEXT", "libEGL.so.1"),
			   dpy, surface, rects, n);
}

PL_EXPORT void glXSwapBuffers(void *dpy, unsigned long drawable)
{
	pl_glx_swap_fn f = REAL(real_glx_swap, pl_glx_swap_fn, "glXSwapBuffers", "libGL.so.1");

	if (!f)
		return;
	if (!ACTIVE()) {
		f(dpy, drawable);
		return;
	}
	pl__sampler_swap_enter();
	f(dpy, drawable);
	pl__sampler_swap_exit();
}

/* A program that looks a swap function up itself (lookup_hooks.c) gets
 * the hook. */
const struct pl_stand_in *pl__swap_stand_in(const char *name)
{
	typedef void (*any_fn)(void);
	static const struct pl_stand_in swaps[] = {
		{ "eglSwapBuffers", &real_egl_swap, (any_fn)eglSwapBuffers },
		{ "eglSwapBuffersWithDamageKHR", &real_egl_swap_khr,
		  (any_fn)eglSwapBuffersWithDamageKHR },
		{ "eglSwapBuffersWithDamageEXT", &real_egl_swap_ext,
		  (any_fn)eglSwapBuffersWithDamageEXT },
		{ "glXSwapBuffers", &real_glx_swap, (any_fn)glXSwapBuffers },
	};

	return pl__stand_in_named(swaps, sizeof(swaps) / sizeof(swaps[0]), name);
}
