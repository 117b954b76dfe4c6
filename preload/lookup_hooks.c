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
#include "sampler.h"

#include <dlfcn.h>
#include <string.h>

#define PL_EXPORT __attribute__((visibility("default")))
#define TAIL_FORWARD __attribute__((optimize("optimize-sibling-calls")))

typedef void *(*pl_dlsym_fn)(void *, const char *);
typedef void (*pl_proc_fn)(void);
typedef pl_proc_fn (*pl_get_proc_fn)(const unsigned char *);
typedef void *(*pl_egl_get_proc_fn)(const char *);

PL_EXPORT void *dlsym(void *handle, const char *name);
PL_EXPORT pl_proc_fn glXGetProcAddress(const unsigned char *name);
PL_EXPORT pl_proc_fn glXGetProcAddressARB(const unsigned char *name);
PL_EXPORT void *eglGetProcAddress(const char *name);

static pl_dlsym_fn real_dlsym_fn;

/* The C library's dlsym, by version: GLIBC_2.34 where it moved into libc,
 * else each port's first version (x86-64, AArch64, ARM, i386/MIPS). */
static pl_dlsym_fn real_dlsym(void)
{
	static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17",
						"GLIBC_2.4", "GLIBC_2.0" };
	pl_dlsym_fn f = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);
	size_t i;
	void *p;

	for (i = 0; !f && i < sizeof(versions) / sizeof(versions[0]); i++) {
		p = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
		if (p) {
			memcpy(&f, &p, sizeof(f)); /* POSIX: a function's address fits */
			__atomic_store_n(&real_dlsym_fn, f, __ATOMIC_RELEASE);
		}
	}
	return f;
}

static bool answering(void)
{
	return __atomic_load_n(&pl__sampler_on, __ATOMIC_RELAXED) != 0;
}

/* The hook for a swap function the lookup found, or what it found. */
static void *answer(const char *name, void *found)
{
	void *hook = found && answering() ? pl__swap_hook_for(name, found) : NULL;

	return hook ? hook : found;
}

static void *real_glx_get_proc, *real_glx_get_proc_arb, *real_egl_get_proc;

/* The GetProcAddress functions are themselves looked up with dlsym
 * (libepoxy, glmark2): the shim's stand-in, forwarding to what was found.
 * NULL when name is none of them. */
static void *get_proc_hook_for(const char *name, void *found)
{
	typedef void (*any_fn)(void);
	static const struct {
		const char *name;
		void **slot;
		any_fn hook;
	} procs[] = {
		{ "glXGetProcAddress", &real_glx_get_proc, (any_fn)glXGetProcAddress },
		{ "glXGetProcAddressARB", &real_glx_get_proc_arb, (any_fn)glXGetProcAddressARB },
		{ "eglGetProcAddress", &real_egl_get_proc, (any_fn)eglGetProcAddress },
	};
	size_t i;

	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		void *none = NULL, *hook;

		if (strcmp(name, procs[i].name) != 0)
			continue;
		memcpy(&hook, &procs[i].hook, sizeof(hook)); /* POSIX: a function's address fits */
		if (found && found != hook)
			__atomic_compare_exchange_n(procs[i].slot, &none, found, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		return hook;
	}
	return NULL;
}

static bool is_answered(const char *name)
{
	return pl__swap_hook_for(name, NULL) || get_proc_hook_for(name, NULL);
}

static void *swap_lookup(void *handle, const char *name)
{
	pl_dlsym_fn f = real_dlsym();
	void *found = f ? f(handle, name) : NULL, *hook;

	if (!found)
		return NULL;
	hook = get_proc_hook_for(name, found);
	return hook ? hook : answer(name, found);
}

TAIL_FORWARD PL_EXPORT void *dlsym(void *handle, const char *name)
{
	pl_dlsym_fn f;

	if (__builtin_expect(answering(), 0) && handle != RTLD_NEXT && handle != RTLD_DEFAULT &&
	    is_answered(name)) /* name: non-null, as glibc declares it */
		return swap_lookup(handle, name);
	f = real_dlsym();
	if (!f)
		return NULL; /* no C library dlsym: cannot happen on glibc */
	return f(handle, name); /* a jump: the caller's return address stays */
}

/* The real GetProcAddress functions, as the swap hooks find theirs. */
static void *real_proc_lookup(void **slot, const char *name, const char *soname)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	pl_dlsym_fn f;
	void *h;

	if (p || !(f = real_dlsym()))
		return p;
	p = f(RTLD_NEXT, name);
	if (!p && (h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
		p = f(h, name);
		dlclose(h); /* RTLD_NOLOAD took a reference of its own */
	}
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}

static pl_proc_fn glx_get_proc(void **slot, const char *fn_name, const unsigned char *name)
{
	void *p = real_proc_lookup(slot, fn_name, "libGL.so.1");
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
	void *p = real_proc_lookup(&real_egl_get_proc, "eglGetProcAddress", "libEGL.so.1");
	pl_egl_get_proc_fn f;
	void *found;

	if (!p)
		return NULL;
	memcpy(&f, &p, sizeof(f));
	found = f(name);
	return name ? answer(name, found) : found;
}
