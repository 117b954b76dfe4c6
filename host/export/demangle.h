/* C++ names as people read them, for the names the host finds in debug
 * files (symbolize.c): "plrender::Scene::draw(unsigned long)", not
 * "_ZN8plrender5Scene4drawEm", as the device's sampler shows the names it
 * finds itself (preload/sampler/sampler_demangle.c). */
#ifndef PL_HOST_DEMANGLE_H
#define PL_HOST_DEMANGLE_H

/* name made readable (malloc'd), or NULL: not a C++ name, no C++ runtime
 * on this machine (said once), or no memory. */
char *pl__demangle(const char *name);

#endif
