/* The lookups through which programs reach the swap functions without
 * linking them: dlsym on a handle of the GL or EGL library (glmark2
 * dlopens libGL.so.1 and asks it for glXSwapBuffers), glXGetProcAddress
 * (ARB) and eglGetProcAddress, themselves often found with dlsym (libepoxy).
 * When the sampler is on and the name is a swap function, the answer is
 * the shim's hook (sampler_hooks.c), which forwards to what the lookup
 * found; a GetProcAddress function found with dlsym is answered with the
 * shim's, which forwards to it; every other lookup, and every lookup
 * while the sampler is off, returns exactly what it would without the shim.
 *
 * glibc only (meson.build): glibc's dlsym takes the caller's return
 * address to resolve RTLD_NEXT and RTLD_DEFAULT (the caller's own scope),
 * so a forward must leave the return address alone: the forward is a tail
 * call (a jump), forced by optimize("optimize-sibling-calls") and checked
 * by preload_lookup (an interposer preloaded after the shim still finds
 * the next definition with RTLD_NEXT). Lookups with RTLD_NEXT or
 * RTLD_DEFAULT are never answered by the shim: RTLD_DEFAULT already finds
 * the shim's exported hooks. musl's dlsym takes the caller's address too
 * and has no dlvsym to find the real one: no hook there. */
#include "real_symbol.h"
#include "sampler.h"
#include "stand_in.h"

#include <dlfcn.h>
#include <string.h>

#define PL_EXPORT __attribute__((visibility("default")))
#define TAIL_FORWARD __attribute__((optimize("optimize-sibling-calls")))

typedef void (*pl_proc_fn)(void);
typedef pl_proc_fn (*pl_get_proc_fn)(const unsigned char *);
typedef void *(*pl_egl_get_proc_fn)(const char *);

PL_EXPORT void *dlsym(void *handle, const char *name);
PL_EXPORT pl_proc_fn glXGetProcAddress(const unsigned char *name);
PL_EXPORT pl_proc_fn glXGetProcAddressARB(const unsigned char *name);
PL_EXPORT void *eglGetProcAddress(const char *name);

static bool answering(void)
{
	return __atomic_load_n(&pl__sampler_on, __ATOMIC_RELAXED) != 0;
}

/* The hook for a swap function the lookup found, or what it found. */
static void *answer(const char *name, void *found)
{
	const struct pl_stand_in *s = found && answering() ? pl__swap_stand_in(name) : NULL;

	return s ? pl__stand_in_take(s, found) : found;
}

/* What the GetProcAddress stand-ins forward to. */
static void *real_glx_get_proc, *real_glx_get_proc_arb, *real_egl_get_proc;

/* The GetProcAddress functions are themselves looked up with dlsym
 * (libepoxy, glmark2): the shim's stand-ins, forwarding to what was found. */
static const struct pl_stand_in *get_proc_stand_in(const char *name)
{
	typedef void (*any_fn)(void);
	static const struct pl_stand_in procs[] = {
		{ "glXGetProcAddress", &real_glx_get_proc, (any_fn)glXGetProcAddress },
		{ "glXGetProcAddressARB", &real_glx_get_proc_arb, (any_fn)glXGetProcAddressARB },
		{ "eglGetProcAddress", &real_egl_get_proc, (any_fn)eglGetProcAddress },
	};

	return pl__stand_in_named(procs, sizeof(procs) / sizeof(procs[0]), name);
}

/* The lookup of a name the shim stands in for: the stand-in, once the C
 * library's lookup found the real one. */
static void *stand_in_lookup(void *handle, const char *name, const struct pl_stand_in *s)
{
	void *found = pl__dlsym_unanswered(handle, name);

	return found ? pl__stand_in_take(s, found) : NULL;
}

TAIL_FORWARD PL_EXPORT void *dlsym(void *handle, const char *name)
{
	const struct pl_stand_in *s;
	pl_dlsym_fn f;

	if (__builtin_expect(answering(), 0) && handle != RTLD_NEXT && handle != RTLD_DEFAULT &&
	    /* name: non-null, as glibc declares it */
	    ((s = pl__swap_stand_in(name)) != NULL || (s = get_proc_stand_in(name)) != NULL))
		return stand_in_lookup(handle, name, s);
	f = pl__libc_dlsym();
	if (!f)
		return NULL; /* no C library dlsym: cannot happen on glibc */
	return f(handle, name); /* a jump: the caller's return address stays */
}

static pl_proc_fn glx_get_proc(void **slot, const char *fn_name, const unsigned char *name)
{
	void *p = pl__real_symbol(slot, fn_name, "libGL.so.1");
	pl_get_proc_fn f;
	pl_proc_fn r;
	void *found, *a;

	if (!p)
		return NULL;
	memcpy(&f, &p, sizeof(f));
	r = f(name);
	if (!r || !name)
		return r;
	memcpy(&found, &r, sizeof(found));
	a = answer((const char *)name, found);
	memcpy(&r, &a, sizeof(r));
	return r;
}

PL_EXPORT pl_proc_fn glXGetProcAddress(const unsigned char *name)
{
	return glx_get_proc(&real_glx_get_proc, "glXGetProcAddress", name);
}

PL_EXPORT pl_proc_fn glXGetProcAddressARB(const unsigned char *name)
{
	return glx_get_proc(&real_glx_get_proc_arb, "glXGetProcAddressARB", name);
}

PL_EXPORT void *eglGetProcAddress(const char *name)
{
	void *p = pl__real_symbol(&real_egl_get_proc, "eglGetProcAddress", "libEGL.so.1");
	pl_egl_get_proc_fn f;
	void *found;

	if (!p)
		return NULL;
	memcpy(&f, &p, sizeof(f));
	found = f(name);
	return name ? answer(name, found) : found;
}
