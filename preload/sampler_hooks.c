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
#include "sampler.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#define PL_EXPORT __attribute__((visibility("default")))

typedef unsigned int pl_egl_bool;
typedef int32_t pl_egl_int;
typedef pl_egl_bool (*pl_egl_swap_fn)(void *, void *);
typedef pl_egl_bool (*pl_egl_swap_damage_fn)(void *, void *, pl_egl_int *, pl_egl_int);
typedef void (*pl_glx_swap_fn)(void *, unsigned long);

static void *real_lookup(const char *name, const char *soname)
{
	void *p = dlsym(RTLD_NEXT, name);
	void *h;

	if (p)
		return p;
	h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	p = dlsym(h, name);
	dlclose(h); /* RTLD_NOLOAD took a reference of its own */
	return p;
}

/* Resolve once into *slot; NULL when nothing after the shim defines it.
 * While sampling, the soname lookup goes through the shim's own dlsym
 * (lookup_hooks.c), which answers it with this very hook and puts what it
 * found into the slot: the slot then wins, or the hook would call itself
 * (a GL library loaded RTLD_LOCAL, as GStreamer loads its plugins). */
#define REAL(slot, type, name, soname)                                            \
	__extension__({                                                           \
		type f_ = __atomic_load_n(&(slot), __ATOMIC_ACQUIRE);              \
		if (!f_) {                                                        \
			void *p_ = real_lookup(name, soname);                     \
			f_ = __atomic_load_n(&(slot), __ATOMIC_ACQUIRE);          \
			if (!f_ && p_) {                                          \
				memcpy(&f_, &p_, sizeof(f_));                     \
				__atomic_store_n(&(slot), f_, __ATOMIC_RELEASE);   \
			}                                                         \
		}                                                                 \
		f_;                                                               \
	})

/* The hooks' own prototypes: no EGL or GLX header declares them here. */
PL_EXPORT pl_egl_bool eglSwapBuffers(void *dpy, void *surface);
PL_EXPORT pl_egl_bool eglSwapBuffersWithDamageKHR(void *dpy, void *surface, pl_egl_int *rects,
						   pl_egl_int n);
PL_EXPORT pl_egl_bool eglSwapBuffersWithDamageEXT(void *dpy, void *surface, pl_egl_int *rects,
						   pl_egl_int n);
PL_EXPORT void glXSwapBuffers(void *dpy, unsigned long drawable);

static pl_egl_swap_fn real_egl_swap;
static pl_egl_swap_damage_fn real_egl_swap_khr, real_egl_swap_ext;
static pl_glx_swap_fn real_glx_swap;

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
 * the hook; what its lookup found becomes the function the hook forwards
 * to, unless one was found already. The shim's own hook, found through a
 * handle whose scope holds the shim, is never taken for the real one. */
void *pl__swap_hook_for(const char *name, void *found)
{
	typedef void (*any_fn)(void);
	static const struct {
		const char *name;
		void **slot;
		any_fn hook;
	} swaps[] = {
		{ "eglSwapBuffers", (void **)&real_egl_swap, (any_fn)eglSwapBuffers },
		{ "eglSwapBuffersWithDamageKHR", (void **)&real_egl_swap_khr,
		  (any_fn)eglSwapBuffersWithDamageKHR },
		{ "eglSwapBuffersWithDamageEXT", (void **)&real_egl_swap_ext,
		  (any_fn)eglSwapBuffersWithDamageEXT },
		{ "glXSwapBuffers", (void **)&real_glx_swap, (any_fn)glXSwapBuffers },
	};
	size_t i;

	for (i = 0; i < sizeof(swaps) / sizeof(swaps[0]); i++) {
		void *none = NULL, *hook;

		if (strcmp(name, swaps[i].name) != 0)
			continue;
		memcpy(&hook, &swaps[i].hook, sizeof(hook)); /* POSIX: a function's address fits */
		if (found && found != hook)
			__atomic_compare_exchange_n(swaps[i].slot, &none, found, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		return hook;
	}
	return NULL;
}
