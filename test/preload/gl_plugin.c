/* libplglplugin.so: a plugin as GStreamer's GL plugins are, dlopened
 * RTLD_LOCAL and linking its GL library (here the stand-in libEGL.so.1
 * of test/preload/fake_egl/), which the loader then brings in RTLD_LOCAL
 * too. The plugin calls eglSwapBuffers by symbol: the global scope comes
 * first, so the call reaches the shim's hook, and the hook can find the
 * real function only by the library's soname. */
__attribute__((visibility("default"))) unsigned int plugin_swap(void *dpy, void *surface);
unsigned int eglSwapBuffers(void *dpy, void *surface);

unsigned int plugin_swap(void *dpy, void *surface)
{
	return eglSwapBuffers(dpy, surface);
}
